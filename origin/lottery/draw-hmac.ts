/**
 * HMAC-SHA256 for the draw's hot loop: the same function as node:crypto's `createHmac('sha256')`
 * (a test checks them against each other on random inputs), computed from precomputed midstates.
 * A draw hashes every entrant twice or three times with one key (the seed) and, for tickets, one
 * 64-byte prefix (the digest), so the key's two pad blocks and the digest's block are compressed once
 * per draw instead of once per call; what remains per entrant is 2 compressions for an entrant id and
 * 3 for a ticket, with no object made per call. node:crypto pays a fresh HMAC context (key setup: two
 * extra compressions) and a C++ crossing per call — about 3× the time here (bench/draw.ts).
 * Results are 8 big-endian 32-bit words (`Int32Array(8)`); `hexOf` spells them as the rule does.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const BLOCK = 64;
const W = new Int32Array(64);

/** One SHA-256 compression of `block[off, off + 64)` into `h`. */
function compress(h: Int32Array, block: Uint8Array, off: number): void {
  const w = W;
  for (let i = 0; i < 16; i++) {
    const j = off + 4 * i;
    w[i] = (block[j]! << 24) | (block[j + 1]! << 16) | (block[j + 2]! << 8) | block[j + 3]!;
  }
  expand(w);
  rounds(h, w);
}

/** The message schedule: words 16-63 from the block's 16 words in `w[0, 16)`. */
function expand(w: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15]!;
    const b = w[i - 2]!;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
}

/** The 64 rounds of a compression over a full schedule `w`, added into `h`. */
function rounds(h: Int32Array, w: Int32Array): void {
  let a = h[0]!;
  let b = h[1]!;
  let c = h[2]!;
  let d = h[3]!;
  let e = h[4]!;
  let f = h[5]!;
  let g = h[6]!;
  let hh = h[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (hh + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = (h[0]! + a) | 0;
  h[1] = (h[1]! + b) | 0;
  h[2] = (h[2]! + c) | 0;
  h[3] = (h[3]! + d) | 0;
  h[4] = (h[4]! + e) | 0;
  h[5] = (h[5]! + f) | 0;
  h[6] = (h[6]! + g) | 0;
  h[7] = (h[7]! + hh) | 0;
}

/** The schedule of a padding block alone (a message of whole blocks): 0x80, zeros, the length in bits. */
function paddingSchedule(bits: number): Int32Array {
  const w = new Int32Array(64);
  w[0] = 0x80000000 | 0;
  w[15] = bits | 0;
  expand(w);
  return w;
}

/** Four lowercase hex characters of every 16-bit value, as one big-endian word of ASCII bytes. */
const HEX4 = (() => {
  const codes = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
  const t = new Int32Array(65536);
  for (let v = 0; v < 65536; v++)
    t[v] = (codes[v >>> 12]! << 24) | (codes[(v >>> 8) & 15]! << 16) | (codes[(v >>> 4) & 15]! << 8) | codes[v & 15]!;
  return t;
})();

const HEX_CODES = new Uint8Array([...'0123456789abcdef'].map((c) => c.charCodeAt(0)));

/** The 64 lowercase hex characters of 8 words (the rule's spelling of a hash). */
export function hexOf(words: Int32Array, at = 0): string {
  // Spelled into bytes, then one flat string: building it by concatenation makes a
  // string per character, and a draw spells hundreds of thousands of hashes.
  hexInto(words, at, HEX_SCRATCH, 0);
  return HEX_SCRATCH.toString('latin1', 0, 64);
}

const HEX_SCRATCH = Buffer.alloc(64);

/** Writes the hex spelling of 8 words as 64 ASCII bytes at `out[off]`. */
export function hexInto(words: Int32Array, at: number, out: Uint8Array, off: number): void {
  for (let i = 0; i < 8; i++) {
    const v = words[at + i]!;
    for (let s = 28, j = off + 8 * i; s >= 0; s -= 4, j++) out[j] = HEX_CODES[(v >>> s) & 15]!;
  }
}

/** HMAC-SHA256 under one key, optionally after a fixed prefix of whole 64-byte blocks. */
export class DrawHmac {
  private readonly inner: Int32Array;
  private readonly outer: Int32Array;
  /** Bytes hashed into `inner` before the message: the key block and the prefix. */
  private readonly before: number;
  private readonly h = new Int32Array(8);
  private scratch: Buffer = Buffer.alloc(4 * BLOCK);
  /** The schedule of the outer hash's one block: the inner hash, then constant padding (words 8-15). */
  private readonly outerW = new Int32Array(64);
  /** The padding block after a 64-byte message (ofHex), scheduled once: it depends only on the length. */
  private readonly hexPadW: Int32Array;

  constructor(key: string | Uint8Array, prefix?: string) {
    let k = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
    if (k.length > BLOCK) k = sha256(k);
    const ipad = new Uint8Array(BLOCK).fill(0x36);
    const opad = new Uint8Array(BLOCK).fill(0x5c);
    for (let i = 0; i < k.length; i++) {
      ipad[i] = ipad[i]! ^ k[i]!;
      opad[i] = opad[i]! ^ k[i]!;
    }
    this.inner = IV.slice();
    compress(this.inner, ipad, 0);
    this.outer = IV.slice();
    compress(this.outer, opad, 0);
    let before = BLOCK;
    if (prefix !== undefined) {
      const p = Buffer.from(prefix, 'utf8');
      if (p.length % BLOCK !== 0) throw new Error('a DrawHmac prefix must be whole 64-byte blocks');
      for (let off = 0; off < p.length; off += BLOCK) compress(this.inner, p, off);
      before += p.length;
    }
    this.before = before;
    this.hexPadW = paddingSchedule((before + 64) * 8);
    // 0x80 then the outer message's length: key block + 32-byte inner hash, in bits.
    this.outerW[8] = 0x80000000 | 0;
    this.outerW[15] = (BLOCK + 32) * 8;
  }

  /** HMAC of a string (UTF-8) into `out[at, at + 8)`. */
  ofString(message: string, out: Int32Array, at = 0): void {
    const n = Buffer.byteLength(message, 'utf8');
    if (n + 2 * BLOCK > this.scratch.length) this.scratch = Buffer.alloc(n + 2 * BLOCK);
    this.scratch.write(message, 0, 'utf8');
    this.finish(n, out, at);
  }

  /** HMAC of the first `bytes` bytes of an ASCII string (a prefix, with no copy of it made). */
  ofAsciiPrefix(text: string, bytes: number, out: Int32Array, at = 0): void {
    this.ofAscii(text, 0, bytes, out, at);
  }

  /** HMAC of `text[start, end)`, ASCII (a line's user id inside a page, with no copy of it made). */
  ofAscii(text: string, start: number, end: number, out: Int32Array, at = 0): void {
    const bytes = end - start;
    // A message that fits one block with its padding (a user id): spelled straight into the schedule.
    if (bytes <= BLOCK - 9) {
      const w = W;
      w.fill(0, 0, 16);
      for (let i = 0; i < bytes; i++) w[i >> 2] = w[i >> 2]! | (text.charCodeAt(start + i) << (24 - 8 * (i & 3)));
      w[bytes >> 2] = w[bytes >> 2]! | (0x80 << (24 - 8 * (bytes & 3)));
      w[15] = (this.before + bytes) * 8;
      expand(w);
      const h = this.h;
      h.set(this.inner);
      rounds(h, w);
      this.outerHash(out, at);
      return;
    }
    if (bytes + 2 * BLOCK > this.scratch.length) this.scratch = Buffer.alloc(bytes + 2 * BLOCK);
    this.scratch.write(text.slice(start, end), 0, bytes, 'latin1');
    this.finish(bytes, out, at);
  }

  /**
   * HMAC of the 64-character hex spelling of `words[from, from + 8)` into `out[at, at + 8)`: the hex
   * is one whole block, spelled straight into the schedule's words, and its padding block's schedule
   * is computed once (a ticket costs 3 compressions, one of them rounds only).
   */
  ofHex(words: Int32Array, from: number, out: Int32Array, at = 0): void {
    const w = W;
    for (let i = 0; i < 8; i++) {
      const v = words[from + i]!;
      w[2 * i] = HEX4[v >>> 16]!;
      w[2 * i + 1] = HEX4[v & 0xffff]!;
    }
    expand(w);
    const h = this.h;
    h.set(this.inner);
    rounds(h, w);
    rounds(h, this.hexPadW);
    this.outerHash(out, at);
  }

  /** The message is `scratch[0, n)`: pad it, finish the inner hash, then the outer. */
  private finish(n: number, out: Int32Array, at: number): void {
    const buf = this.scratch;
    const h = this.h;
    h.set(this.inner);
    let off = 0;
    for (; off + BLOCK <= n; off += BLOCK) compress(h, buf, off);
    const rest = n - off;
    const tail = rest + 9 <= BLOCK ? BLOCK : 2 * BLOCK;
    buf.copyWithin(0, off, n);
    buf[rest] = 0x80;
    buf.fill(0, rest + 1, tail - 4);
    const bits = (this.before + n) * 8;
    buf[tail - 4] = (bits >>> 24) & 255;
    buf[tail - 3] = (bits >>> 16) & 255;
    buf[tail - 2] = (bits >>> 8) & 255;
    buf[tail - 1] = bits & 255;
    compress(h, buf, 0);
    if (tail > BLOCK) compress(h, buf, BLOCK);
    this.outerHash(out, at);
  }

  /** The outer hash over the inner one in `h` (its words are the block's first 8 words), into `out`. */
  private outerHash(out: Int32Array, at: number): void {
    const h = this.h;
    const w = this.outerW;
    for (let i = 0; i < 8; i++) w[i] = h[i]!;
    expand(w);
    h.set(this.outer);
    rounds(h, w);
    for (let i = 0; i < 8; i++) out[at + i] = h[i]!;
  }
}

/** Plain SHA-256 of bytes (only for a key longer than a block). */
function sha256(data: Uint8Array): Uint8Array {
  const h = IV.slice();
  const total = data.length;
  const padded = new Uint8Array(Math.ceil((total + 9) / BLOCK) * BLOCK);
  padded.set(data);
  padded[total] = 0x80;
  const bits = total * 8;
  padded[padded.length - 4] = (bits >>> 24) & 255;
  padded[padded.length - 3] = (bits >>> 16) & 255;
  padded[padded.length - 2] = (bits >>> 8) & 255;
  padded[padded.length - 1] = bits & 255;
  for (let off = 0; off < padded.length; off += BLOCK) compress(h, padded, off);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    out[4 * i] = h[i]! >>> 24;
    out[4 * i + 1] = (h[i]! >>> 16) & 255;
    out[4 * i + 2] = (h[i]! >>> 8) & 255;
    out[4 * i + 3] = h[i]! & 255;
  }
  return out;
}
