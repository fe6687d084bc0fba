// Options that describe how to read an embedding file (compress, eval, search). Used by the
// commands in this folder only.
import { Option, type Command } from 'commander';
import type { ReadOptions } from '../api/options.js';
import { parseInteger } from './options.js';

export interface InputFlags {
  format?: string;
  column?: string;
  tensor?: string;
  array?: string;
  dataset?: string;
  field?: string;
  dim?: number;
  rawDtype?: 'f32' | 'f16';
  dropInvalid?: boolean;
  allowDuplicateInputs?: boolean;
}

/** --format --column --tensor --array --dataset --field --dim --raw-dtype --drop-invalid --allow-duplicate-inputs. `what` names the file they apply to. */
export function addInputOptions(cmd: Command, what = 'the input'): Command {
  return cmd
    .option('--format <format>', `force the format of ${what} (npy, npz, fvecs, bvecs, arrow, parquet, safetensors, hdf5, csv, jsonl, raw) instead of sniffing it`)
    .option('--column <name>', `Arrow/Parquet column holding the vectors in ${what} (default: the only vector column)`)
    .option('--tensor <name>', `safetensors tensor to read from ${what} (default: the only 2-D tensor)`)
    .option('--array <name>', `.npz array to read from ${what} (default: the only 2-D float array)`)
    .option('--dataset <name>', `HDF5 dataset to read from ${what} (default: the only 2-D float dataset, or 'train' in the ann-benchmarks layout)`)
    .option('--field <name>', `JSONL field holding the vectors in ${what} (default: "embedding")`)
    .option('--dim <d>', `vector dimension of raw f32/f16 data (${what})`, (v) => parseInteger('--dim', v, 1))
    .addOption(
      new Option('--raw-dtype <dtype>', `element type of raw data (${what}; default f32)`).choices(['f32', 'f16']),
    )
    .option('--drop-invalid', `skip vectors containing NaN or Inf in ${what} (and say how many) instead of failing`)
    .option('--allow-duplicate-inputs', `read a file named twice in ${what} (the same path, a link to it, or a glob matching it again) twice, as asked; without it that is refused`);
}

export function readOptionsFrom(o: InputFlags): ReadOptions {
  return {
    format: o.format,
    column: o.column,
    tensor: o.tensor,
    array: o.array,
    dataset: o.dataset,
    field: o.field,
    dim: o.dim,
    rawDtype: o.rawDtype,
    dropInvalid: o.dropInvalid,
    allowDuplicateInputs: o.allowDuplicateInputs,
  };
}
