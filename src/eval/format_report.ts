/** Human-readable table of a Report: one row per subset, then the overall row. */
import type { Metrics, Percent, Report } from './metrics.js';

const COLUMNS = ['n', 'action_match', 'type_acc', 'text_acc', 'text_exact', 'click_acc', 'scroll_acc', 'tap_in_box', 'invalid'] as const;

function cell(m: Metrics, key: (typeof COLUMNS)[number]): string {
  if (key === 'n' || key === 'invalid') return String(m[key]);
  const v: Percent = m[key];
  return v === null ? '-' : v.toFixed(2);
}

export function formatReport(report: Report): string {
  const rows: [string, Metrics][] = [...Object.entries(report.subsets), ['overall', report]];
  const table = [['subset', ...COLUMNS], ...rows.map(([name, m]) => [name, ...COLUMNS.map((k) => cell(m, k))])];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((s, c) => (c === 0 ? s.padEnd(widths[c]!) : s.padStart(widths[c]!))).join('  ');
  const out = table.map(line);
  out.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  if (Object.keys(report.subsets).length > 0) out.splice(out.length - 1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const notes = [
    'accuracies in %; "-" = no item in the denominator. click/scroll over gold taps/scrolls; text over gold & predicted TYPE.',
  ];
  if (Object.keys(report.subsets).length > 0) notes.push('overall accuracies = mean over subsets (macro); n and invalid are totals.');
  return [...out, ...notes].join('\n') + '\n';
}
