// Reads a Dockerfile into stages of plain instructions (ARG defaults substituted, FROM's flags left out).
import { DockerfileParser } from 'dockerfile-ast';

export interface Step { keyword: string; args: string[]; from?: string; line: number }
export interface Stage { name: string | undefined; image: string; steps: Step[] }

function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a?: string, b?: string) => vars[(a ?? b) as string] ?? whole);
}

export function parseDockerfile(content: string): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of DockerfileParser.parse(content).getInstructions()) {
    const keyword = instruction.getKeyword();
    const raw = instruction.getArguments().map((a) => a.getValue());
    const line = instruction.getRange().start.line + 1;
    const stage = stages.at(-1);
    if (keyword === 'ARG' && !stage) {
      const [name, value] = (raw[0] ?? '').split('=');
      if (name && value !== undefined) args[name] = value;
    } else if (keyword === 'FROM') {
      const words = raw.filter((a) => !a.startsWith('--'));
      const as = words.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({ name: as >= 0 ? words[as + 1] : undefined, image: substitute(words[0] ?? '', args), steps: [] });
    } else if (stage) {
      const fromFlag = 'getFromFlag' in instruction
        ? (instruction as unknown as { getFromFlag(): { getValue(): string | null } | null }).getFromFlag() : null;
      const from = fromFlag?.getValue() ?? undefined;
      const rest = raw.filter((a) => !a.startsWith('--'));
      const jsonArgs = 'getJSONStrings' in instruction
        ? (instruction as unknown as { getJSONStrings(): { getJSONValue(): string }[] }).getJSONStrings().map((s) => s.getJSONValue())
        : [];
      const shell = keyword === 'RUN' ? [instruction.getArgumentsContent() ?? ''] : rest;
      stage.steps.push({ keyword, args: jsonArgs.length ? jsonArgs : shell, ...(from ? { from } : {}), line });
    }
  }
  return { args, stages };
}
