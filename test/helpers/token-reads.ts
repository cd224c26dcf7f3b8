// The read side of the agent's token as docs/security.md states it ("What a stolen agent token can
// read"): the table's resources and verbs, and the reads it says the token does not have.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO } from './manifests.ts';

const SECTION = '## What a stolen agent token can read';

export interface DocumentedReads {
  /** "resource verb" for each verb of each resource in the table. */
  granted: string[];
  /** The section's text. */
  text: string;
}

export async function documentedReads(): Promise<DocumentedReads> {
  const doc = await readFile(path.join(REPO, 'docs/security.md'), 'utf8');
  const start = doc.indexOf(SECTION);
  if (start < 0) return { granted: [], text: '' };
  const end = doc.indexOf('\n## ', start + SECTION.length);
  const text = doc.slice(start, end < 0 ? undefined : end);
  const granted = [...text.matchAll(/^\| (`[^|]+`) \| ([a-z, ]+) \|/gm)].flatMap(([, resources, verbs]) =>
    [...(resources as string).matchAll(/`([^`]+)`/g)].flatMap(([, resource]) => (verbs as string).split(',').map((verb) => `${resource} ${verb.trim()}`)));
  return { granted, text };
}
