/** `data web`: real browser-rendered screens and task suites in AITW's format. */
export { buildWebDataset, ALL_SITES, DEFAULT_CATALOGUE, DEFAULT_HELD_OUT, WEB_GENERATOR_VERSION } from './writer.js';
export type { Catalogue, WebOptions, WebResult, WebSummary, SiteSummary } from './writer.js';
export { MANUALS, DEFAULT_MANUAL_CACHE, locateManual, type ManualSpec, type SiteKind } from './sites.js';
export { APP_SITES, appModel, type AppModel, type AppSiteSpec } from './app_model.js';
export { DEVICES, launchChromium, phoneContext, PhoneScreen, type Device, type Shot } from './browser.js';
export { collectScreenItems, toAnnotations, ICON_TYPES } from './annotate.js';
export { readLinkGraph, shortestPaths, type LinkGraph } from './graph.js';
export type { TaskKind } from './goals.js';
