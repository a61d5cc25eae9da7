import { actionMatchingValidator, type ActionMatchingValidation } from '../eval/validate.js';
import { fit, type TrainOptions, type TrainResult } from '../train/trainer.js';

/** `autoui train`: the training loop, keeping the epoch with the best validation action matching. */
export function train(opts: TrainOptions): Promise<TrainResult<ActionMatchingValidation>> {
  return fit(opts, actionMatchingValidator(opts.groundWeight));
}
