import { tapSource } from '../model/pointer.js';
import type { Validation, Validator } from '../train/trainer.js';
import { predictSplit } from './evaluate.js';
import { scoreItems, type Report } from './metrics.js';

export interface ActionMatchingValidation extends Validation {
  report: Report;
}

/**
 * Validation by AITW action matching (subset mean), decoding exactly as `eval` and `serve` do by
 * default — taps from the decoder's pointer or the screen attention as `auto` picks them (model/pointer.ts) —
 * so the checkpoint kept as best is best where it is used.
 */
export function actionMatchingValidator(groundWeight: number): Validator<ActionMatchingValidation> {
  return (model, codec, split, rows) => {
    const taps = tapSource('auto', { grid: split.table.encoder.grid, groundWeight, pointer: model.config.tapPointer === true });
    const { report } = scoreItems(predictSplit([model], codec, split, { rows, quiet: true, taps }));
    const score = report.action_match ?? 0;
    return { score, report, summary: `val action matching ${score.toFixed(2)}% (click ${report.click_acc?.toFixed(1) ?? '-'}%)` };
  };
}
