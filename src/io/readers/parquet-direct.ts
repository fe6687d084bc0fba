// Fast path for Parquet vector columns: hyparquet's parquetRead rebuilds every row as a JS array
// (Dremel assembly), which costs more than decoding the pages. For the common case, a list column
// with no nulls and every row of the same length, this walks the column chunk's pages with
// hyparquet's own page decoders and streams the flat values straight into the Dataset, checking
// the row boundaries from the repetition levels. Anything unusual returns undefined first, and
// parquet.ts reads the file the general way (and words any error).
// Uses hyparquet's internal modules (public as hyparquet/src/*.js), pinned at 1.31.5.
import type { AsyncBuffer, FileMetaData, SchemaTree } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { convert, convertWithDictionary, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readPlain } from 'hyparquet/src/plain.js';
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getSchemaPath } from 'hyparquet/src/schema.js';
import { compressors } from 'hyparquet-compressors';
import type { VectorDtype } from '../../vectors/dataset.js';
import { plausibleRows, RowCollector } from './collect.js';

/** Thrown inside the walk to abandon the fast path. */
class NotSimple extends Error {}

export async function readParquetDirect(
  file: AsyncBuffer,
  metadata: FileMetaData,
  column: string,
  dtype: VectorDtype,
  progress: () => void,
  inputBytes: number,
): Promise<{ rows: RowCollector; d: number } | undefined> {
  const total = Number(metadata.num_rows);
  let rows: RowCollector | undefined;
  let d = -1;
  let pending: number[] = []; // values of a row split across two pages
  let valuesSeen = 0; // values of this column so far, across pages and row groups
  try {
    for (const group of metadata.row_groups) {
      const chunks = group.columns.filter((c) => c.meta_data && c.meta_data.path_in_schema[0] === column);
      if (chunks.length !== 1 || chunks[0].file_path) return undefined;
      const meta = chunks[0].meta_data!;
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const bytes = await file.slice(start, start + Number(meta.total_compressed_size));
      progress();
      // The leaf's path: [root, column, repeated group, element] (or [root, column, repeated leaf]).
      const path: SchemaTree[] = getSchemaPath(metadata.schema, meta.path_in_schema);
      if (getMaxRepetitionLevel(path) !== 1) return undefined;
      const decoder = {
        pathInSchema: meta.path_in_schema,
        type: meta.type,
        element: path[path.length - 1].element,
        schemaPath: path,
        codec: meta.codec,
        compressors,
        parsers: DEFAULT_PARSERS,
      };
      const maxDef = getMaxDefinitionLevel(path);
      const reader = { view: new DataView(bytes), offset: 0 };
      let dictionary: ArrayLike<number> | undefined;
      let groupValues = 0;
      while (groupValues < Number(meta.num_values)) {
        const header = parquetHeader(reader);
        const pageBytes = new Uint8Array(bytes, reader.offset, header.compressed_page_size);
        reader.offset += header.compressed_page_size;
        if (header.type === 'DICTIONARY_PAGE') {
          const page = decompressPage(pageBytes, header.uncompressed_page_size, meta.codec, compressors);
          const view = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
          dictionary = convert(readPlain(view, meta.type, header.dictionary_page_header!.num_values, decoder.element.type_length), decoder) as ArrayLike<number>;
          continue;
        }
        let page;
        let encoding: string;
        if (header.type === 'DATA_PAGE') {
          const daph = header.data_page_header!;
          page = readDataPage(decompressPage(pageBytes, header.uncompressed_page_size, meta.codec, compressors), daph, decoder);
          encoding = daph.encoding;
        } else if (header.type === 'DATA_PAGE_V2') {
          page = readDataPageV2(pageBytes, header, decoder);
          encoding = header.data_page_header_v2!.encoding;
        } else {
          continue; // index pages
        }
        progress();
        const { definitionLevels: defs, repetitionLevels: reps } = page;
        // No nulls and no empty lists: every level entry carries one value.
        if (defs?.length) for (let i = 0; i < defs.length; i++) if (defs[i] !== maxDef) throw new NotSimple();
        const values = convertWithDictionary(page.dataPage, dictionary as never, encoding as never, decoder) as ArrayLike<number>;
        if (values.length !== reps.length) throw new NotSimple();
        if (d < 0) {
          // d = distance between the first two row starts (needs two rows in the first page).
          const second = reps.indexOf(0, 1);
          if (reps[0] !== 0 || second <= 0) throw new NotSimple();
          d = second;
          rows = new RowCollector(d, dtype, plausibleRows(total, d, inputBytes));
        }
        // Row starts (repetition level 0) must fall exactly every d values.
        for (let i = 0; i < reps.length; i++) if ((reps[i] === 0) !== ((valuesSeen + i) % d === 0)) throw new NotSimple();
        appendValues(rows!, values, pending, d);
        valuesSeen += values.length;
        groupValues += values.length;
      }
    }
  } catch {
    // NotSimple, or a decoder error on odd bytes: the general path re-reads and words the problem.
    return undefined;
  }
  if (!rows || pending.length !== 0 || rows.rows !== total) return undefined;
  return { rows, d };
}

/** Append whole rows from `values`, carrying a row split across pages in `pending`. */
function appendValues(rows: RowCollector, values: ArrayLike<number>, pending: number[], d: number): void {
  let at = 0;
  if (pending.length > 0) {
    while (pending.length < d && at < values.length) pending.push(values[at++]);
    if (pending.length < d) return;
    rows.append(pending, 0, 1);
    pending.length = 0;
  }
  const whole = Math.floor((values.length - at) / d);
  if (whole > 0) rows.append(values, at, whole);
  for (let i = at + whole * d; i < values.length; i++) pending.push(values[i]);
}
