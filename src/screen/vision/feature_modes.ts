/** Which transformers.js class loads a folder ('auto': AutoModel picks by config.json's model_type). */
export type TransformersKind = 'clip' | 'siglip' | 'auto';

/**
 * Which features a transformers.js tower yields per screen:
 *   patches         patch tokens (a CLIP-style class token dropped), grid² × D — the default
 *   pooled          the pooled vector alone, 1 × D (BLIP-2-style, as the paper's main model)
 *   patches+pooled  patch tokens then the pooled vector as one more row, (grid² + 1) × D
 */
export type FeatureMode = 'patches' | 'pooled' | 'patches+pooled';
export const FEATURE_MODES: readonly FeatureMode[] = ['patches', 'pooled', 'patches+pooled'];
