// A minimal zip writer for the .npz tests: stored or deflated (node:zlib) members, optionally with
// every size and offset in zip64 fields (as numpy writes large members), optionally damaged.
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  data: Uint8Array;
  deflate?: boolean;
}

export function zipBytes(entries: ZipEntry[], o: { zip64?: boolean } = {}): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const push = (b: Buffer) => {
    parts.push(b);
    offset += b.length;
  };
  for (const e of entries) {
    const body = e.deflate ? deflateRawSync(e.data) : Buffer.from(e.data);
    const crc = crc32(e.data);
    const name = Buffer.from(e.name);
    const wide = o.zip64 ?? false;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(wide ? 45 : 20, 4);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(wide ? 0xffffffff : body.length, 18);
    local.writeUInt32LE(wide ? 0xffffffff : e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const localExtra = wide ? extra64([e.data.length, body.length]) : Buffer.alloc(0);
    local.writeUInt16LE(localExtra.length, 28);
    const headerAt = offset;
    push(Buffer.concat([local, name, localExtra, body]));

    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(wide ? 45 : 20, 4);
    c.writeUInt16LE(wide ? 45 : 20, 6);
    c.writeUInt16LE(e.deflate ? 8 : 0, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(wide ? 0xffffffff : body.length, 20);
    c.writeUInt32LE(wide ? 0xffffffff : e.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    const centralExtra = wide ? extra64([e.data.length, body.length, headerAt]) : Buffer.alloc(0);
    c.writeUInt16LE(centralExtra.length, 30);
    c.writeUInt32LE(wide ? 0xffffffff : headerAt, 42);
    central.push(Buffer.concat([c, name, centralExtra]));
  }
  const cd = Buffer.concat(central);
  const cdAt = offset;
  push(cd);
  if (o.zip64) {
    const rec = Buffer.alloc(56);
    rec.writeUInt32LE(0x06064b50, 0);
    rec.writeBigUInt64LE(44n, 4);
    rec.writeUInt16LE(45, 12);
    rec.writeUInt16LE(45, 14);
    rec.writeBigUInt64LE(BigInt(entries.length), 24);
    rec.writeBigUInt64LE(BigInt(entries.length), 32);
    rec.writeBigUInt64LE(BigInt(cd.length), 40);
    rec.writeBigUInt64LE(BigInt(cdAt), 48);
    const recAt = offset;
    push(rec);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(recAt), 8);
    loc.writeUInt32LE(1, 16);
    push(loc);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(o.zip64 ? 0xffff : entries.length, 8);
  end.writeUInt16LE(o.zip64 ? 0xffff : entries.length, 10);
  end.writeUInt32LE(o.zip64 ? 0xffffffff : cd.length, 12);
  end.writeUInt32LE(o.zip64 ? 0xffffffff : cdAt, 16);
  push(end);
  return new Uint8Array(Buffer.concat(parts));
}

function extra64(values: number[]): Buffer {
  const b = Buffer.alloc(4 + 8 * values.length);
  b.writeUInt16LE(1, 0);
  b.writeUInt16LE(8 * values.length, 2);
  values.forEach((v, i) => b.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
  return b;
}
