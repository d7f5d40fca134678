// Times one ONNX model with ONNX Runtime (CPU) on inputs written by run.py.
// usage: node ort_bench.mjs SPEC.json
//   SPEC: {"model": path, "threads": n, "repeat": n,
//          "inputs": [{"name", "path" (raw little-endian f32, bytes for
//                      "type": "bool", i64 for "type": "int64"), "dims"}],
//          "output": path (raw f32 of output 0),
//          "outputs": [path, ...] (optional: raw f32 of every output, in order)}
// Prints one line: median_ms=<x> min_ms=<y> max_ms=<z>
import * as ort from 'onnxruntime-node';
import { readFileSync, writeFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const session = await ort.InferenceSession.create(spec.model, {
  intraOpNumThreads: spec.threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
});
const feeds = {};
for (const inp of spec.inputs) {
  const buf = readFileSync(inp.path);
  if (inp.type === 'bool') {
    const data = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    feeds[inp.name] = new ort.Tensor('bool', data, inp.dims);
    continue;
  }
  if (inp.type === 'int64') {
    const data = new BigInt64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
    feeds[inp.name] = new ort.Tensor('int64', data, inp.dims);
    continue;
  }
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  feeds[inp.name] = new ort.Tensor('float32', data, inp.dims);
}
let out = await session.run(feeds); // warm-up
const times = [];
for (let i = 0; i < spec.repeat; ++i) {
  const t0 = process.hrtime.bigint();
  out = await session.run(feeds);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
const n = times.length;
const median = n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
const write = (path, t) =>
  writeFileSync(path, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
write(spec.output, out[session.outputNames[0]]);
(spec.outputs || []).forEach((path, i) => write(path, out[session.outputNames[i]]));
console.log(`median_ms=${median.toFixed(3)} min_ms=${times[0].toFixed(3)} max_ms=${times[n - 1].toFixed(3)}`);
