/**
 * Hugging Face tokenizers (T5 / FLAN-T5 / FLAN-Alpaca folders) behind our TextTokenizer interface.
 *
 * A folder's `tokenizer.json` (+ `tokenizer_config.json`) is loaded with transformers.js'
 * AutoTokenizer, remote loading disabled. A folder with only `spiece.model` (the SentencePiece
 * protobuf of the original T5 releases) is converted in memory to the equivalent Unigram
 * tokenizer.json, the way HF's T5 converter does, and built with the same classes.
 *
 * Id layout: the tokenizer's ids come first, unchanged, so a pretrained embedding keeps its rows.
 * `vocabSize` may be raised to the model's embedding size (T5's 32128 rows > the tokenizer's 32100
 * ids); ids in between are never produced. The action codec appends its tokens after vocabSize.
 *
 * Unlike words-v1 this is not lossless: SentencePiece collapses runs of whitespace and maps
 * characters outside its vocabulary to <unk>.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { AutoTokenizer, env, PreTrainedTokenizer } from '@huggingface/transformers';
import protobuf from 'protobufjs';
import { InputError } from '../util/errors.js';
import { registerTokenizerKind, type TextTokenizer, type TokenizerJSON } from './tokenizer.js';

export const HF_TOKENIZER = 'hf-tokenizer-v1';

type Json = Record<string, unknown>;

export interface HfTokenizerJSON extends TokenizerJSON {
  kind: typeof HF_TOKENIZER;
  /** Contents of tokenizer.json (or the one converted from spiece.model). */
  tokenizer: Json;
  /** Contents of tokenizer_config.json ({} when the folder has none). */
  config: Json;
  /** Text id range [0, vocabSize); at least the tokenizer's own size. */
  vocabSize: number;
}

export interface HfTokenizerOptions {
  /** Raise vocabSize to this (the model's embedding rows), so codec tokens follow the embedding. */
  vocabSize?: number;
}

/** The part of transformers.js' tokenizer we use (its .d.ts types are loose). */
interface HfTokenizerLike {
  encode(text: string, opts: { add_special_tokens: boolean }): number[];
  decode(ids: number[], opts: { skip_special_tokens: boolean }): string;
  get_vocab(): Map<string, number> | Record<string, number>;
  pad_token_id?: number | null;
  eos_token_id?: number | null;
  unk_token_id?: number | null;
  all_special_ids: number[];
}

const LONE_SURROGATE_RE = /[\uD800-\uDFFF]/u;

class HfTokenizer implements TextTokenizer {
  readonly kind = HF_TOKENIZER;
  readonly vocabSize: number;
  readonly padId: number;
  readonly eosId: number;
  readonly unkId: number;
  /** Ids the tokenizer itself knows: [0, ownSize). */
  readonly ownSize: number;
  private readonly special: Set<number>;

  constructor(
    private readonly tok: HfTokenizerLike,
    private readonly json: Json,
    private readonly config: Json,
    vocabSize: number | undefined,
    where: string,
  ) {
    const vocab = tok.get_vocab();
    const ids = vocab instanceof Map ? [...vocab.values()] : Object.values(vocab);
    this.ownSize = ids.reduce((m, id) => Math.max(m, id + 1), 0);
    if (vocabSize !== undefined && (!Number.isInteger(vocabSize) || vocabSize < this.ownSize)) {
      throw new InputError(`the model's vocabulary (${vocabSize}) is smaller than the tokenizer's (${this.ownSize} ids)`, where);
    }
    this.vocabSize = vocabSize ?? this.ownSize;
    const id = (v: number | null | undefined, name: string): number => {
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new InputError(`the tokenizer defines no ${name} token`, where);
      return v;
    };
    this.padId = id(tok.pad_token_id, 'pad');
    this.eosId = id(tok.eos_token_id, 'eos');
    this.unkId = id(tok.unk_token_id, 'unk');
    this.special = new Set([...tok.all_special_ids, this.padId, this.eosId, this.unkId]);
  }

  encodeText(text: string): number[] {
    const m = LONE_SURROGATE_RE.exec(text);
    if (m) {
      throw new InputError(`text is not well-formed Unicode: lone surrogate U+${m[0].charCodeAt(0).toString(16).toUpperCase()} at index ${m.index}`);
    }
    return this.tok.encode(text, { add_special_tokens: false });
  }

  decodeText(ids: number[]): string {
    ids.forEach((id, k) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new RangeError(`decodeText: id ${id} at position ${k} is outside the text vocabulary [0, ${this.vocabSize})`);
      }
    });
    // Embedding padding rows (ownSize..vocabSize) stand for nothing.
    const own = ids.filter((id) => id < this.ownSize);
    return own.length === 0 ? '' : this.tok.decode(own, { skip_special_tokens: true });
  }

  isTextId(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && id < this.ownSize && !this.special.has(id);
  }

  toJSON(): HfTokenizerJSON {
    return { kind: HF_TOKENIZER, tokenizer: this.json, config: this.config, vocabSize: this.vocabSize };
  }
}

function isObj(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

async function readJson(path: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read (${(err as Error).message})`, path);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InputError(`not valid JSON (${(err as Error).message})`, path);
  }
  if (!isObj(json)) throw new InputError('must hold a JSON object', path);
  return json;
}

/** Local files only, whatever the caller's transformers.js settings were. */
export function disableRemoteLoading(modelDir?: string): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  if (modelDir) env.localModelPath = dirname(resolve(modelDir));
}

function construct(json: Json, config: Json, where: string): HfTokenizerLike {
  try {
    return new PreTrainedTokenizer(json, config) as unknown as HfTokenizerLike;
  } catch (err) {
    throw new InputError(`transformers.js cannot build this tokenizer: ${(err as Error).message}`, where);
  }
}

/**
 * Loads the tokenizer of a Hugging Face model folder: tokenizer.json (preferred) or spiece.model.
 * Throws InputError naming the folder when neither is there or a file is malformed.
 */
export async function loadHfTokenizer(dir: string, opts: HfTokenizerOptions = {}): Promise<TextTokenizer> {
  const root = resolve(dir);
  const jsonPath = join(root, 'tokenizer.json');
  const configPath = join(root, 'tokenizer_config.json');
  const config = existsSync(configPath) ? await readJson(configPath) : {};
  if (existsSync(jsonPath)) {
    const json = await readJson(jsonPath);
    disableRemoteLoading(root);
    let tok: HfTokenizerLike;
    try {
      // An absolute path is not a hub id, so transformers.js reads the files straight from it.
      tok = (await AutoTokenizer.from_pretrained(root, { local_files_only: true })) as unknown as HfTokenizerLike;
    } catch (err) {
      throw new InputError(`transformers.js cannot load this tokenizer: ${(err as Error).message}`, jsonPath);
    }
    return new HfTokenizer(tok, json, config, opts.vocabSize, jsonPath);
  }
  const spmPath = join(root, 'spiece.model');
  if (existsSync(spmPath)) {
    const json = tokenizerJsonFromSentencePiece(new Uint8Array(await readFile(spmPath)), config, spmPath);
    const fullConfig = { tokenizer_class: 'T5Tokenizer', eos_token: '</s>', unk_token: '<unk>', pad_token: '<pad>', ...config };
    return new HfTokenizer(construct(json, fullConfig, spmPath), json, fullConfig, opts.vocabSize, spmPath);
  }
  throw new InputError('no tokenizer here: expected tokenizer.json (with tokenizer_config.json) or spiece.model', root);
}

/** Rebuilds a tokenizer saved in a checkpoint (no folder needed). */
export function hfTokenizerFromJSON(j: TokenizerJSON): TextTokenizer {
  const where = 'tokenizer';
  if (!isObj(j['tokenizer'])) throw new InputError('`tokenizer` must be the tokenizer.json object', `${where}.tokenizer`);
  if (!isObj(j['config'])) throw new InputError('`config` must be the tokenizer_config.json object', `${where}.config`);
  const vocabSize = j['vocabSize'];
  if (typeof vocabSize !== 'number') throw new InputError('`vocabSize` must be a number', `${where}.vocabSize`);
  const json = j['tokenizer'] as Json;
  const config = j['config'] as Json;
  return new HfTokenizer(construct(json, config, where), json, config, vocabSize, where);
}

registerTokenizerKind(HF_TOKENIZER, hfTokenizerFromJSON);

// --- spiece.model → tokenizer.json ---------------------------------------------------------------

/** The fields we read of sentencepiece_model.proto (public field numbers). */
const SPM_SCHEMA = `
syntax = "proto2";
message SentencePiece { optional string piece = 1; optional float score = 2; optional int32 type = 3 [default = 1]; }
message TrainerSpec { optional int32 model_type = 3 [default = 1]; optional bool byte_fallback = 35 [default = false]; optional int32 unk_id = 40 [default = 0]; }
message NormalizerSpec { optional string name = 1; optional bytes precompiled_charsmap = 2; optional bool add_dummy_prefix = 3 [default = true]; }
message ModelProto { repeated SentencePiece pieces = 1; optional TrainerSpec trainer_spec = 2; optional NormalizerSpec normalizer_spec = 3; }
`;
let spmModel: protobuf.Type | undefined;

interface SpmProto {
  pieces: { piece: string; score: number; type: number }[];
  trainerSpec?: { modelType: number; byteFallback: boolean; unkId: number };
  normalizerSpec?: { precompiledCharsmap: Uint8Array };
}

const SPM_UNKNOWN = 2;
const SPM_CONTROL = 3;
const SPM_USER_DEFINED = 4;

/**
 * The Unigram tokenizer.json HF's T5 converter makes from a SentencePiece model: the pieces and
 * scores as they are, `extra_ids` sentinels (<extra_id_0> is the last id) appended, the
 * precompiled NFKC map as normaliser, whitespace split + Metaspace, and `$A </s>` as template.
 */
export function tokenizerJsonFromSentencePiece(bytes: Uint8Array, config: Json, where: string): Json {
  spmModel ??= protobuf.parse(SPM_SCHEMA, { keepCase: false }).root.lookupType('ModelProto');
  let m: SpmProto;
  try {
    m = spmModel.toObject(spmModel.decode(bytes), { defaults: true, bytes: Array }) as unknown as SpmProto;
  } catch (err) {
    throw new InputError(`not a SentencePiece model (${(err as Error).message})`, where);
  }
  if (m.pieces.length === 0) throw new InputError('the SentencePiece model has no pieces', where);
  if (m.trainerSpec && m.trainerSpec.modelType !== 1) {
    throw new InputError(`only Unigram SentencePiece models are supported (T5's kind); this one has model_type ${m.trainerSpec.modelType}`, where);
  }
  const unkId = m.pieces.findIndex((p) => p.type === SPM_UNKNOWN);
  const vocab: [string, number][] = m.pieces.map((p) => [p.piece, p.score]);
  const added: Json[] = [];
  m.pieces.forEach((p, id) => {
    if (p.type === SPM_UNKNOWN || p.type === SPM_CONTROL || p.type === SPM_USER_DEFINED) {
      added.push({ id, content: p.piece, single_word: false, lstrip: false, rstrip: false, normalized: p.type === SPM_USER_DEFINED, special: p.type !== SPM_USER_DEFINED });
    }
  });
  const extraIds = typeof config['extra_ids'] === 'number' ? config['extra_ids'] : 100;
  for (let i = extraIds - 1; i >= 0; i--) {
    const content = `<extra_id_${i}>`;
    added.push({ id: vocab.length, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    vocab.push([content, 0]);
  }
  const eos = m.pieces.findIndex((p) => p.piece === '</s>');
  const charsmap = m.normalizerSpec?.precompiledCharsmap ?? [];
  const normalizers: Json[] = [];
  if (charsmap.length > 0) normalizers.push({ type: 'Precompiled', precompiled_charsmap: Buffer.from(charsmap).toString('base64') });
  normalizers.push({ type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' });
  const metaspace = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'Sequence', normalizers },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace] },
    post_processor:
      eos >= 0
        ? {
            type: 'TemplateProcessing',
            single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
            pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
            special_tokens: { '</s>': { id: '</s>', ids: [eos], tokens: ['</s>'] } },
          }
        : null,
    decoder: metaspace,
    model: { type: 'Unigram', unk_id: unkId >= 0 ? unkId : 0, vocab, byte_fallback: m.trainerSpec?.byteFallback ?? false },
  };
}
