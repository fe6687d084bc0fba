// NumPy .npz: a zip archive of .npy members (np.savez stores them, np.savez_compressed deflates
// them). The chosen member is handed to the .npy reader as a source of its own (zip-member.ts),
// so every .npy dtype and layout works here too and the values go straight into the Dataset.
import { inflateRawSync } from 'node:zlib';
import { npyHeaderOf, readNpy } from './npy.js';
import { BackwardRead, deflatedMember, storedMember, type MemberSource } from './zip-member.js';
import { readZipDirectory, type ZipMember } from './zip.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

const FLOAT_ELEMENTS = new Set(['f32', 'f16', 'f64']);

function memberSource(archive: ByteSource, m: ZipMember): MemberSource {
  if (m.method === 0) return storedMember(archive, m);
  if (m.method === 8) return deflatedMember(archive, m);
  throw badInput(archive, `array '${arrayName(m)}' uses zip compression method ${m.method}; vlc reads stored and deflated members (what np.savez and np.savez_compressed write)`);
}

/** np.savez names member 'x.npy' for array x. */
const arrayName = (m: ZipMember) => m.name.replace(/\.npy$/, '');

/** What a member holds, for choosing and for messages: 'f32 400 × 32', or why it cannot be read. */
function describe(archive: ByteSource, m: ZipMember): { text: string; matrix: boolean } {
  try {
    const h = npyHeaderOf(memberSource(archive, m));
    return { text: `${h.elem} ${h.shape.join(' × ') || 'scalar'}`, matrix: h.shape.length === 2 && FLOAT_ELEMENTS.has(h.elem) };
  } catch (e) {
    if ((e as Error).name !== 'UsageError') throw e;
    return { text: 'not readable', matrix: false };
  }
}

export async function readNpz(archive: ByteSource, wanted: string | undefined): Promise<RawDataset> {
  const members = readZipDirectory(archive).filter((m) => m.name.endsWith('.npy'));
  if (members.length === 0) throw badInput(archive, 'zip archive holds no .npy arrays; vlc reads .npz files as np.savez writes them');
  const listing = () => members.map((m) => `${arrayName(m)} (${describe(archive, m).text})`).join(', ');
  let member: ZipMember | undefined;
  let note: string | undefined;
  if (wanted !== undefined) {
    member = members.find((m) => arrayName(m) === wanted || m.name === wanted);
    if (!member) throw badInput(archive, `no array named '${wanted}' (arrays: ${listing()})`);
  } else if (members.length === 1) {
    member = members[0];
  } else {
    const matrices = members.filter((m) => describe(archive, m).matrix);
    if (matrices.length !== 1)
      throw badInput(archive, `${matrices.length === 0 ? 'has no 2-D float array' : 'has several 2-D float arrays'}; pick one with --array NAME (arrays: ${listing()})`);
    member = matrices[0];
    note = `${archive.name}: reading array '${arrayName(member)}' (the only 2-D float array; --array picks another)`;
  }
  const found = await readMember(archive, member);
  const how = member.method === 8 ? 'deflated' : 'stored';
  return { ...found, format: `npz '${arrayName(member)}' (${found.format}, ${how})`, ...(note ? { note } : {}) };
}

async function readMember(archive: ByteSource, m: ZipMember): Promise<RawDataset> {
  const src = memberSource(archive, m);
  try {
    const found = await readNpy(src);
    src.finish();
    return found;
  } catch (e) {
    if (!(e instanceof BackwardRead)) throw e;
  }
  // A Fortran-order array is read column by column, which an inflate stream cannot do: inflate
  // the member into memory first (the one case that holds the array twice).
  const bytes = inflateRawSync(archive.read(m.dataOffset, m.compressedSize));
  if (bytes.length !== m.size) throw badInput(archive, `member '${m.name}' inflates to ${bytes.length} bytes, the directory says ${m.size}: the archive is corrupted`);
  return readNpy(storedMember(inMemory(archive.name, bytes), { ...m, method: 0, compressedSize: m.size, dataOffset: 0 }));
}

function inMemory(name: string, bytes: Uint8Array): ByteSource {
  const readInto = (dst: Uint8Array, position: number) => dst.set(bytes.subarray(position, position + dst.length));
  return { name, size: bytes.length, readInto, read: (p, l) => bytes.slice(p, p + l), ref: { blocks: [bytes], size: bytes.length }, close: () => {} };
}
