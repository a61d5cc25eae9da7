import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { subsetFractionOption, tapFromOption } from '../src/cli/common.js';
import { trainOptionsFrom, type TrainCliOptions } from '../src/cli/train.js';
import { InputError } from '../src/util/errors.js';

describe('--subset-fraction', () => {
  const parse = subsetFractionOption('--subset-fraction');

  it('parses subset=fraction lists', () => {
    expect(parse('web_shopping=0.6, install=0.7')).toEqual({ web_shopping: 0.6, install: 0.7 });
    expect(parse('single=1')).toEqual({ single: 1 });
    expect(parse('')).toEqual({});
  });

  it('names the option and the bad entry', () => {
    expect(() => parse('webshopping=0.5')).toThrow(/--subset-fraction.*unknown subset 'webshopping'/);
    expect(() => parse('install=0')).toThrow(/fraction for install must be in \(0, 1\], got '0'/);
    expect(() => parse('install=1.5')).toThrow(InputError);
    expect(() => parse('install=abc')).toThrow(InputError);
    expect(() => parse('install')).toThrow(/expected subset=fraction, got 'install'/);
    expect(() => parse('install=0.5=1')).toThrow(/expected subset=fraction/);
  });

  it('train merges it over --google-apps-fraction', () => {
    const base: TrainCliOptions = {
      data: 'd', out: 'o', config: 'tiny', epochs: 1, lr: 1e-3, batch: 8, warmupRatio: 0.1, weightDecay: 0, clipNorm: 1,
      groundWeight: 1, referWeight: 1, referPerRow: 2, seed: 0, googleAppsFraction: 0.1, valRows: 0, saveEvery: 0,
    };
    expect(trainOptionsFrom(base).subsetFraction).toEqual({ google_apps: 0.1 });
    expect(trainOptionsFrom({ ...base, subsetFraction: { install: 0.5, google_apps: 0.3 } }).subsetFraction).toEqual({ google_apps: 0.3, install: 0.5 });
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
    expect(() => parse(['--tap-from', 'pixels'])).toThrow(/--tap-from.*'pixels'.*auto, attention, tokens/s);
  });
});
