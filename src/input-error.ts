// Bad input the user can fix (a flag, a path, a rule file): exit code 2, message without a stack.
// Its own module so the CLI's dispatcher can name it without loading the scan pipeline.
export class InputError extends Error {
  override name = 'InputError';
}
