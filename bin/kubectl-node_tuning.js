#!/usr/bin/env node
// `kubectl node-tuning …`: kubectl finds this file on the PATH as kubectl-node_tuning and runs it
// with the arguments after the plugin name. The same CLI, through its hidden kubectl-plugin command.
process.argv.splice(2, 0, 'kubectl-plugin');
await import('./node-tuning-advisor.js');
