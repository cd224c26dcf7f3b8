// Does a volume of this StorageClass need an attach step before the kubelet can mount it? The
// StorageClass names its provisioner; a CSI driver's CSIDriver object says attachRequired (unset or
// no object: attach). A few non-CSI provisioners are known not to attach.
import type { ApiResult } from './api.ts';
import type { Obj } from '../kube/objects.ts';

export interface AttachAnswer {
  /** null: could not tell (reason in `detail`). */
  attach: boolean | null;
  storageClass: string | null;
  provisioner?: string;
  detail: string;
}

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
/** Not CSI and never attached: hostPath / local volumes. */
const NO_ATTACH_PROVISIONERS = new Set(['rancher.io/local-path', 'openebs.io/local', 'kubernetes.io/no-provisioner']);
/** In-tree block-device plugins (migrated to CSI drivers that attach). */
const ATTACH_IN_TREE = new Set(['kubernetes.io/aws-ebs', 'kubernetes.io/gce-pd', 'kubernetes.io/azure-disk', 'kubernetes.io/cinder', 'kubernetes.io/vsphere-volume']);

export interface StorageView {
  classes: ApiResult<Obj[]>;
  drivers: ApiResult<Obj[]>;
}

/** `requested`: the claim's storageClassName; undefined → the default class; "" → no class (static PVs). */
export function attachFor(requested: string | undefined, view: StorageView): AttachAnswer {
  if (requested === '') return { attach: null, storageClass: null, detail: 'storageClassName "" (a pre-created PV): its volume type is not known here' };
  if (!view.classes.ok) return { attach: null, storageClass: requested ?? null, detail: `cannot list StorageClasses: ${view.classes.reason}` };
  const cls = requested === undefined
    ? view.classes.value.find((c) => c.metadata?.annotations?.[DEFAULT_CLASS] === 'true')
    : view.classes.value.find((c) => c.metadata?.name === requested);
  const name = requested ?? (cls?.metadata?.name as string | undefined) ?? null;
  if (!cls) return { attach: null, storageClass: name, detail: requested === undefined ? 'no default StorageClass' : `StorageClass ${requested} not found` };
  const provisioner = String(cls.provisioner ?? '');
  const base = { storageClass: name, provisioner };
  if (NO_ATTACH_PROVISIONERS.has(provisioner)) return { ...base, attach: false, detail: `${provisioner}: local volumes, no attach` };
  if (ATTACH_IN_TREE.has(provisioner)) return { ...base, attach: true, detail: `${provisioner}: block device, attached by the attach/detach controller` };
  if (!view.drivers.ok) return { ...base, attach: null, detail: `cannot list CSIDrivers: ${view.drivers.reason}` };
  const driver = view.drivers.value.find((d) => d.metadata?.name === provisioner);
  if (!driver) return { ...base, attach: null, detail: `no CSIDriver ${provisioner}: if it is a CSI driver it attaches (attachRequired defaults to true)` };
  const required = driver.spec?.attachRequired;
  const attach = required !== false;
  return { ...base, attach, detail: `CSIDriver ${provisioner} attachRequired: ${required === undefined ? 'unset (true)' : String(required)}` };
}

/** Single-node access only: RWO or RWOP without RWX/ROX. */
export function singleNode(accessModes: string[]): boolean {
  return accessModes.some((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod')
    && !accessModes.some((m) => m === 'ReadWriteMany' || m === 'ReadOnlyMany');
}

const SHORT_MODE: Record<string, string> = { ReadWriteOnce: 'RWO', ReadWriteOncePod: 'RWOP', ReadWriteMany: 'RWX', ReadOnlyMany: 'ROX' };

export function shortModes(accessModes: string[]): string {
  return accessModes.map((m) => SHORT_MODE[m] ?? m).join('+') || 'no access mode';
}
