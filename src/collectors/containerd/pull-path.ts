// Which path containerd's CRI image pulls take, and so where their download limit is read. From
// containerd 2.1 the CRI plugin pulls through the Transfer Service, whose limit is
// plugins."io.containerd.transfer.v1.local".max_concurrent_downloads; it falls back to the older
// local (client-side) pull, which reads the CRI images config's max_concurrent_downloads, when
// use_local_image_pull is set or the CRI images config holds something the Transfer Service does
// not take (internal/cri/config/config.go CheckLocalImagePullConfigs: max_concurrent_downloads != 3,
// registry mirrors/configs/auths, disable_snapshot_annotations = false, discard_unpacked_layers,
// image_pull_with_sync_fs). Before 2.1 every CRI pull is local.
import type { FileSettings } from './settings.ts';

export const DEFAULT_DOWNLOADS = 3;

/** containerd's version as major.minor, with where it was read; undefined when unknown. */
export interface ContainerdVersion {
  major: number;
  minor: number;
  text: string;
  source: string;
}

export type PullPath =
  | { path: 'transfer' | 'local'; downloads: number; why: string; set: boolean }
  | { unknown: string };

/** What in the CRI images config makes containerd 2.1+ fall back to the local pull; undefined: nothing. */
export function localPullTrigger(s: FileSettings): string | undefined {
  if (s.useLocalImagePull === true) return 'use_local_image_pull = true';
  if (s.criDownloads !== undefined && s.criDownloads !== DEFAULT_DOWNLOADS) return `max_concurrent_downloads = ${s.criDownloads} in the CRI images config`;
  if (s.registrySections.length > 0) return `registry ${s.registrySections.join('/')} in the CRI images config`;
  if (s.disableSnapshotAnnotations === false) return 'disable_snapshot_annotations = false';
  if (s.discardUnpackedLayers === true) return 'discard_unpacked_layers = true';
  if (s.imagePullWithSyncFs === true) return 'image_pull_with_sync_fs = true';
  return undefined;
}

const TRANSFER_KEY = 'plugins."io.containerd.transfer.v1.local".max_concurrent_downloads';

function local(s: FileSettings, why: string): PullPath {
  return { path: 'local', downloads: s.criDownloads ?? DEFAULT_DOWNLOADS, set: s.criDownloads !== undefined, why };
}

function transfer(s: FileSettings, why: string): PullPath {
  return { path: 'transfer', downloads: s.transferDownloads ?? DEFAULT_DOWNLOADS, set: s.transferDownloads !== undefined, why: `${why}: ${TRANSFER_KEY}` };
}

const atLeast21 = (v: ContainerdVersion): boolean => v.major > 2 || (v.major === 2 && v.minor >= 1);

export function pullPath(s: FileSettings, version: ContainerdVersion | undefined, versionWhy: string): PullPath {
  const trigger = localPullTrigger(s);
  if (version && !atLeast21(version)) return local(s, `containerd ${version.text} (${version.source}) pulls with the CRI images config (the Transfer Service pulls from 2.1)`);
  if (trigger) return local(s, `${trigger}: containerd 2.1+ falls back from the Transfer Service to the local pull, which reads the CRI images config`);
  if (version) return transfer(s, `containerd ${version.text} (${version.source}) pulls through its Transfer Service`);
  const asLocal = s.criDownloads ?? DEFAULT_DOWNLOADS;
  const asTransfer = s.transferDownloads ?? DEFAULT_DOWNLOADS;
  if (asLocal === asTransfer) {
    return { path: 'local', downloads: asLocal, set: s.criDownloads !== undefined || s.transferDownloads !== undefined, why: `${asLocal} on either pull path (the CRI images config before containerd 2.1, ${TRANSFER_KEY} from 2.1)` };
  }
  return { unknown: `containerd 2.1+ pulls through its Transfer Service (${TRANSFER_KEY} = ${asTransfer}), older ones with the CRI images config (${asLocal}), and containerd's version is unknown: ${versionWhy}` };
}

/** "containerd://2.1.4" (the Node's containerRuntimeVersion) or a package version "1.7.24~ds1-1" → major.minor. */
export function containerdVersionOf(text: string, source: string): ContainerdVersion | undefined {
  const match = /^(?:containerd:\/\/)?v?(\d{1,3})\.(\d{1,3})(?:\.\d+)?/.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), text: text.trim().replace(/^containerd:\/\//, '').slice(0, 40), source };
}
