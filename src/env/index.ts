export { AdbEnv, adbCanCheck, REMOTE_DUMP, type AdbEnvOptions } from './adb.js';
export { ChromiumEnv, CHROMIUM_ARGS, DEFAULT_CHROMIUM, isAllowedUrl, type ChromiumEnvOptions } from './chromium.js';
export { checkElement, checkUrl, EnvironmentError, observationFromPng, scalePoint, type CheckResult, type ElementFacts, type Environment, type Observation, type PageState } from './environment.js';
