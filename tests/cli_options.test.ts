import { describe, expect, it } from 'vitest';
import { Command, Option } from 'commander';
import { subsetFractionOption, tapFromOption } from '../src/cli/common.js';
import { addTrainOptions, RECIPE_FLAGS, trainOptionsFrom, type TrainCliOptions } from '../src/cli/train.js';
import { RECIPES } from '../src/train/recipes.js';
import { recipeOptions } from '../src/train/trainer.js';
import { DEMO_DEFAULTS } from '../src/pipeline/demo.js';
import { InputError } from '../src/util/errors.js';

describe('--subset-fraction', () => {
  const parse = subsetFractionOption('--subset-fraction');

  it('parses subset=fraction lists, the shards’ own subsets and oversampling included', () => {
    expect(parse('web_shopping=0.6, install=0.7')).toEqual({ web_shopping: 0.6, install: 0.7 });
    expect(parse('single=1')).toEqual({ single: 1 });
    expect(parse('web=3')).toEqual({ web: 3 });
    expect(parse('')).toEqual({});
  });

  it('names the option and the bad entry', () => {
    expect(() => parse('web shopping=0.5')).toThrow(/--subset-fraction.*'web shopping' is not a subset name/);
    expect(() => parse('install=0')).toThrow(/fraction for install must be in \(0, 10\] \(above 1 its rows repeat\), got '0'/);
    expect(() => parse('install=10.5')).toThrow(InputError);
    expect(() => parse('install=abc')).toThrow(InputError);
    expect(() => parse('install')).toThrow(/expected subset=fraction, got 'install'/);
    expect(() => parse('install=0.5=1')).toThrow(/expected subset=fraction/);
  });

  it('train merges it over the recipe and --google-apps-fraction', () => {
    const base: TrainCliOptions = { data: 'd', out: 'o', config: 'tiny', seed: 0, saveEvery: 0 };
    expect(trainOptionsFrom(base).subsetFraction).toEqual({ web_shopping: 0.7, install: 0.7, web: 3 });
    expect(trainOptionsFrom({ ...base, googleAppsFraction: 0.1 }).subsetFraction).toEqual({ web_shopping: 0.7, install: 0.7, web: 3, google_apps: 0.1 });
    expect(trainOptionsFrom({ ...base, googleAppsFraction: 0.1, subsetFraction: { install: 0.5, google_apps: 0.3, web: 1 } }).subsetFraction).toEqual({ web_shopping: 0.7, google_apps: 0.3, install: 0.5, web: 1 });
  });
});

describe('train recipes', () => {
  const base: TrainCliOptions = { data: 'd', out: 'o', config: 'tiny', seed: 0, saveEvery: 0 };

  it('plain `train` runs the scratch recipe (the demo’s), --init the pretrained one (Auto-UI’s)', () => {
    const scratch = trainOptionsFrom(base);
    expect(scratch).toMatchObject({ recipe: 'scratch', ...RECIPES.scratch, subsetFraction: RECIPES.scratch.subsetFraction });
    const pre = trainOptionsFrom({ ...base, init: '/models/flan-alpaca-base' });
    expect(pre).toMatchObject({ recipe: 'pretrained', lr: 1e-4, batchSize: 4, epochs: 10, dropoutRate: 0.1, subsetFraction: { google_apps: 0.1 } });
    expect(trainOptionsFrom({ ...base, recipe: 'pretrained' }).lr).toBe(1e-4);
  });

  it('the default seed is the demo’s, so a plain `train` on the demo’s shards trains the demo’s model', () => {
    expect(recipeOptions('scratch').seed).toBe(DEMO_DEFAULTS.seed);
  });

  it('flags override single fields of the recipe and leave the rest', () => {
    const o = trainOptionsFrom({ ...base, lr: 5e-4, batch: 32, dropout: 0.2, coordBins: 50, valRows: 0 });
    expect(o).toMatchObject({ recipe: 'scratch', lr: 5e-4, batchSize: 32, dropoutRate: 0.2, coordBins: 50, valRows: 0, epochs: RECIPES.scratch.epochs });
  });

  it('each recipe flag is read under the name commander gives it (else the flag is parsed and then ignored)', () => {
    for (const [key, [flags]] of Object.entries(RECIPE_FLAGS)) expect(new Option(flags).attributeName(), flags).toBe(key);
    expect(trainOptionsFrom({ ...base, relabel: 0.5 }).relabelRate).toBe(0.5);
  });

  it('every recipe flag refuses a negative number, naming itself', () => {
    for (const [flags, , , parse] of Object.values(RECIPE_FLAGS)) {
      const name = flags.split(' ')[0]!;
      if (typeof parse !== 'function') continue;
      expect(() => parse('-1', undefined), name).toThrow(new RegExp(`${name}.*≥ \\d.*'-1'`));
      expect(parse('2', undefined)).toBe(2);
    }
  });

  it('--case-tokens turns the case tokens on; the recipe leaves them off', () => {
    expect(trainOptionsFrom(base).caseTokens).toBe(false);
    expect(trainOptionsFrom({ ...base, caseTokens: true }).caseTokens).toBe(true);
  });

  it("--copy-context sets the copy context, --no-copy-context takes it away; the scratch recipe reads the states', the pretrained none", () => {
    expect(trainOptionsFrom(base).copyContext).toBe('states');
    expect(trainOptionsFrom({ ...base, recipe: 'pretrained' }).copyContext).toBe(false);
    expect(trainOptionsFrom({ ...base, copyContext: true }).copyContext).toBe(true);
    const parsed = (args: string[]) => addTrainOptions(new Command().exitOverride()).parse(args, { from: 'user' }).opts().copyContext as boolean | string | undefined;
    expect(parsed([])).toBeUndefined();
    expect(parsed(['--copy-context'])).toBe(true);
    expect(parsed(['--no-copy-context'])).toBe(false);
    expect(trainOptionsFrom({ ...base, copyContext: parsed(['--no-copy-context']) }).copyContext).toBe(false);
    expect(trainOptionsFrom({ ...base, copyContext: 'embeddings' }).copyContext).toBe(true);
    expect(trainOptionsFrom({ ...base, copyContext: parsed(['--copy-context', 'states']) }).copyContext).toBe('states');
    expect(() => trainOptionsFrom({ ...base, copyContext: 'ids' })).toThrow(/--copy-context: unknown value 'ids'/);
  });

  it("--copy-stop-context turns the stop's context on beside a copy context, and is refused without one; the scratch recipe's is on", () => {
    const pretrained = { ...base, recipe: 'pretrained' as const };
    expect(trainOptionsFrom(base).copyStopContext).toBe(true);
    expect(trainOptionsFrom(pretrained).copyStopContext).toBe(false);
    expect(trainOptionsFrom({ ...pretrained, copyContext: 'states', copyStopContext: true }).copyStopContext).toBe(true);
    expect(trainOptionsFrom({ ...base, copyStopContext: false }).copyStopContext).toBe(false);
    // Taking the context away takes the stop's with it; asking for both is refused by name.
    expect(trainOptionsFrom({ ...base, copyContext: false })).toMatchObject({ copyContext: false, copyStopContext: false });
    expect(() => trainOptionsFrom({ ...pretrained, copyStopContext: true })).toThrow(/--copy-stop-context: needs --copy-context/);
    expect(() => trainOptionsFrom({ ...base, copyContext: false, copyStopContext: true })).toThrow(/--copy-stop-context: needs --copy-context/);
    const parsed = (args: string[]) => addTrainOptions(new Command().exitOverride()).parse(args, { from: 'user' }).opts().copyStopContext as boolean | undefined;
    expect(parsed([])).toBeUndefined();
    expect(parsed(['--no-copy-stop-context'])).toBe(false);
  });

  it('refuses an unknown config, naming the option', () => {
    expect(() => trainOptionsFrom({ ...base, config: 'huge' })).toThrow(/--config: unknown config 'huge'/);
  });
});

describe('--tap-from', () => {
  const parse = (args: string[]) => {
    const cmd = new Command().exitOverride().configureOutput({ writeErr: () => {} }).addOption(tapFromOption()).action(() => {});
    return cmd.parse(args, { from: 'user' }).opts().tapFrom as string;
  };

  it('defaults to auto and takes the three sources', () => {
    expect(parse([])).toBe('auto');
    expect(parse(['--tap-from', 'tokens'])).toBe('tokens');
    expect(parse(['--tap-from', 'attention'])).toBe('attention');
  });

  it('refuses anything else, naming the choices', () => {
    expect(() => parse(['--tap-from', 'pixels'])).toThrow(/--tap-from.*'pixels'.*auto, pointer, pointer-centre, attention, tokens/s);
  });
});
