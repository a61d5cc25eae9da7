/**
 * What the episode planner knows of one site: its copied pages, link graph, page names, and (for
 * generated apps) the app model. Built once per site, before any browser work.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SuccessCheck } from '../suite.js';
import type { AppModel } from './app_model.js';
import { commonTitleSuffix, isTaskPage, pageName, readLinkGraph, type LinkGraph } from './graph.js';
import type { TaskKind } from './goals.js';
import type { GoldStep } from './recorder.js';
import type { SiteKind } from './sites.js';

export interface SiteModel {
  site: string;
  kind: SiteKind;
  /** How goals name the site ("the Flask docs"). */
  label: string;
  pagesDir: string;
  graph: LinkGraph;
  /** Page (relative path) → its name as goals say it. */
  names: Map<string, string>;
  start: string;
  /** Sphinx search page, when the site has a working one. */
  searchPage?: string;
  app?: AppModel;
}

/** One executed gold episode, before it becomes records. */
export interface Episode {
  kind: TaskKind;
  goal: string;
  /** Start page, relative to the site's pages folder. */
  start: string;
  steps: GoldStep[];
  success: SuccessCheck;
}

export async function siteModel(o: { site: string; kind: SiteKind; label: string; pagesDir: string; start: string; sphinx: boolean; app?: AppModel }): Promise<SiteModel> {
  const graph = await readLinkGraph(o.pagesDir);
  const suffix = commonTitleSuffix([...graph.values()].map((p) => p.title));
  const names = new Map([...graph.values()].map((p) => [p.path, pageName(p.title, suffix)]));
  return {
    site: o.site,
    kind: o.kind,
    label: o.label,
    pagesDir: o.pagesDir,
    graph,
    names,
    start: o.start,
    ...(o.sphinx ? { searchPage: 'search.html' } : {}),
    ...(o.app ? { app: o.app } : {}),
  };
}

export const pageUrl = (m: SiteModel, rel: string): string => pathToFileURL(join(m.pagesDir, rel)).href;

/** The page a file:// URL shows, relative to the site's pages folder; undefined when outside it. */
export function pageOf(m: SiteModel, url: string): string | undefined {
  const base = pathToFileURL(m.pagesDir).href + '/';
  const u = url.split('#')[0]!.split('?')[0]!;
  return u.startsWith(base) ? decodeURIComponent(u.slice(base.length)) : undefined;
}

/** A URL check that holds exactly on `rel` wherever the suite folder is moved. */
export const onPage = (rel: string): SuccessCheck => ({ url_endswith: `/pages/${rel}` });

/** Task pages (with a name) in sorted order. */
export function taskPages(m: SiteModel): string[] {
  return [...m.graph.keys()].filter(isTaskPage);
}
