/** Built-in synthetic AITW set: public entry points. */
export { renderScreen, type RenderedScreen } from './render.js';
export { rasterizeScreen } from './raster.js';
export { generateTrace, renderTrace, subsetsFor, GENERATOR_VERSION, type EpisodeTrace, type TraceStep } from './episode.js';
export { synthesize, episodesPerSubset, splitEpisodes, splitsFor, type SynthOptions, type SynthSummary, type SynthResult } from './writer.js';
export { makeWorld, type ScreenSize, type World } from './world.js';
export { initialState, applyEvent, type UiState, type Screen, type UiEvent } from './state.js';
export { APPS, APP_SPLITS, UNSEEN_APP_IDS, inAppSplit, type AppSplit } from './apps.js';
