import { it } from 'vitest';
import { AutoImageProcessor, RawImage } from '@huggingface/transformers';
import { writeVisionTower, TINY_CLIP } from '../../scripts/make_tiny_onnx.js';
it('x', async () => {
  const d = await writeVisionTower('/tmp/pp-clip', TINY_CLIP);
  const p: any = await AutoImageProcessor.from_pretrained(d, { local_files_only: true });
  const w = 40, h = 80; const data = new Uint8ClampedArray(w*h*3); for (let i=0;i<w*h;i++) data.set([200,30,90], i*3);
  const out = await p([new RawImage(data, w, h, 3)]);
  const v = out.pixel_values; console.log(v.dims, [...new Set(Array.from(v.data as Float32Array).map((x:number)=>x.toFixed(5)))].slice(0,12));
  console.log((200/255-0.48145466)/0.26862954, (30/255-0.4578275)/0.26130258, (90/255-0.40821073)/0.27577711);
});
