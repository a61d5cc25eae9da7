import { describe, expect, it } from 'vitest';
import { parseSuite, resolveTaskUrl, taskKind, tasksOfKinds, withoutFragment } from '../src/data/suite.js';
import { InputError } from '../src/util/errors.js';

const line = (o: object) => JSON.stringify(o);
const base = { id: 't1', goal: 'open Install', start_url: 'site/index.html', success: { url_endswith: 'install.html' } };

describe('task suites', () => {
  it('resolves relative URLs against the suite folder and keeps absolute ones', () => {
    const [t] = parseSuite(line({ ...base, home_url: 'http://127.0.0.1:9/x', success: { url: 'site/a.html#top' } }), '/data/suites/s.jsonl');
    expect(t!.start_url).toBe('file:///data/suites/site/index.html');
    expect(t!.home_url).toBe('http://127.0.0.1:9/x');
    expect(t!.success).toEqual({ url: 'file:///data/suites/site/a.html#top' });
    expect(resolveTaskUrl('https://e.org/a', '/x')).toBe('https://e.org/a');
    expect(withoutFragment('file:///a/b.html#c')).toBe('file:///a/b.html');
  });

  it('accepts every success form and rejects others, naming line and field', () => {
    const forms = [{ url: 'a.html' }, { url_endswith: 'a.html' }, { selector: '#s', text_contains: 'ok' }, { selector: '#s', checked: true }, { selector: 'input', value: 'v' }];
    const text = forms.map((success, i) => line({ ...base, id: `t${i}`, success })).join('\n');
    expect(parseSuite(text, '/s.jsonl')).toHaveLength(5);
    expect(() => parseSuite(line({ ...base, success: { selector: '#s' } }), '/s.jsonl')).toThrow(/\/s\.jsonl:1.*success/);
    expect(() => parseSuite(line({ ...base, goal: '' }), '/s.jsonl')).toThrow(InputError);
    expect(() => parseSuite(line({ ...base, viewport: { width: 412, height: 915 } }), '/s.jsonl')).toThrow(/viewport\.dpr/);
    expect(() => parseSuite(line({ ...base, extra: 1 }), '/s.jsonl')).toThrow(/extra/);
  });

  it('picks the tasks of the kinds asked for, and names the kinds it has when none match', () => {
    const tasks = parseSuite([line({ ...base, meta: { kind: 'navigate' } }), line({ ...base, id: 't2', meta: { kind: 'search' } }), line({ ...base, id: 't3' })].join('\n'), '/s.jsonl');
    expect(tasks.map(taskKind)).toEqual(['navigate', 'search', undefined]);
    expect(tasksOfKinds(tasks, undefined, '/s.jsonl')).toEqual(tasks);
    expect(tasksOfKinds(tasks, ['search', 'navigate'], '/s.jsonl').map((t) => t.id)).toEqual(['t1', 't2']);
    expect(() => tasksOfKinds(tasks, ['toggle'], '/s.jsonl')).toThrow(/\/s\.jsonl: no task of kind toggle; the suite's kinds: navigate, search/);
    expect(() => tasksOfKinds(tasks.slice(2), ['toggle'], '/s.jsonl')).toThrow(/none \(no task has meta\.kind\)/);
  });

  it('refuses duplicate ids and bad JSON with the line number', () => {
    expect(() => parseSuite([line(base), line(base)].join('\n'), '/s.jsonl')).toThrow(/s\.jsonl:2: duplicate task id 't1'/);
    expect(() => parseSuite(`${line(base)}\n{oops`, '/s.jsonl')).toThrow(/s\.jsonl:2: not valid JSON/);
  });
});
