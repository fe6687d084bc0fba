// Every command, one file each. Order here is the order in --help.
import type { Command } from 'commander';

export const commands: Array<(program: Command) => void> = [];
