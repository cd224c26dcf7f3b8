// What loading rule files yields: rules and overrides with the file and line they came from, the
// errors found, and what one file's text holds (known-rule-files.ts hands it over prebuilt).
import type { RuleDefinition, RuleOverride } from './schema.ts';

export interface PathError {
  segments: (string | number)[];
  message: string;
}

export interface RuleFileError {
  file: string;
  line: number;
  col: number;
  key: string;
  message: string;
}

export interface Located {
  file: string;
  line: number;
}

export type LoadedRule = RuleDefinition & Located;
export type LoadedOverride = RuleOverride & Located;

export interface RuleLoadResult {
  rules: LoadedRule[];
  overrides: LoadedOverride[];
  files: string[];
  errors: RuleFileError[];
}

/** What one rule file's text holds, without the file's name: rules and overrides with their lines, or errors. */
export interface ParsedRuleFile {
  rules: Omit<LoadedRule, 'file'>[];
  overrides: Omit<LoadedOverride, 'file'>[];
  errors: Omit<RuleFileError, 'file'>[];
}
