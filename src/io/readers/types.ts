import type { Dataset } from '../../vectors/dataset.js';

/** What a format reader returns; read.ts then checks values and fills in `dropped`. */
export type RawDataset = Omit<Dataset, 'dropped'> & {
  /** Rows the reader itself skipped under --drop-invalid (e.g. null Arrow rows). */
  dropped?: number;
  /** Set by readers that already scanned the values: first row with NaN/Inf, or -1 for none. */
  firstBadRow?: number;
  /** A choice the reader made that the user should hear about (e.g. which dataset it read). */
  note?: string;
};
