import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBounds, parseUiTree } from '../src/screen/text/ui_tree.js';
import { InputError } from '../src/util/errors.js';

const size = { width: 1080, height: 2400 };

const DUMP = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" content-desc="" bounds="[0,0][1080,2400]">
    <node index="0" text="Network &amp; internet" resource-id="android:id/title" class="android.widget.TextView" content-desc="" bounds="[189,600][702,660]" />
    <node index="1" text="" class="android.widget.ImageButton" content-desc="Navigate up" bounds="[0,84][147,231]">
      <node index="0" text="  " class="android.view.View" content-desc="" bounds="[10,90][20,100]" />
    </node>
    <node index="2" text="Wi‑Fi" class="android.widget.Switch" content-desc="ignored when text is set" bounds="[900,700][1200,800]" />
    <node index="3" text="Hidden" class="android.widget.TextView" content-desc="" bounds="[100,2500][300,2600]" />
    <node index="4" text="Odd" class="android.widget.TextView" content-desc="" bounds="[1,2]" />
  </node>
</hierarchy>`;

describe('uiautomator dump → ScreenText[]', () => {
  it('takes text, else content-desc, with bounds normalised (y, x, h, w) and clipped to the screen', () => {
    const texts = parseUiTree(DUMP, size);
    expect(texts.map((t) => t.text)).toEqual(['Network & internet', 'Navigate up', 'Wi‑Fi']);
    expect(texts[0]!.box).toEqual([600 / 2400, 189 / 1080, 60 / 2400, 513 / 1080]);
    expect(texts[1]!.box).toEqual([84 / 2400, 0, 147 / 2400, 147 / 1080]);
    // The switch reaches past the right edge: clipped at 1080.
    expect(texts[2]!.box).toEqual([700 / 2400, 900 / 1080, 100 / 2400, 180 / 1080]);
    expect(texts.every((t) => t.score === 1)).toBe(true);
  });

  it('an empty hierarchy has no texts; bad XML or another document is an InputError naming the dump', () => {
    expect(parseUiTree('<hierarchy rotation="0"/>', size)).toEqual([]);
    expect(parseUiTree('<hierarchy/>', size)).toEqual([]);
    expect(() => parseUiTree('<hierarchy><node text="a" bounds="[0,0][1,1]"></hierarchy>', size, 'dump.xml')).toThrow(/dump\.xml: not well-formed XML \(line 1/);
    expect(() => parseUiTree('<html><body/></html>', size)).toThrow(InputError);
  });

  it('bounds: every box stays inside the unit square, or is dropped', () => {
    fc.assert(
      fc.property(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: -3000, max: 3000 }), (x1, y1, x2, y2) => {
        const b = parseBounds(`[${x1},${y1}][${x2},${y2}]`, size);
        if (b === null) return Math.min(x2, 1080) <= Math.max(x1, 0) || Math.min(y2, 2400) <= Math.max(y1, 0);
        const [y, x, h, w] = b;
        return y >= 0 && x >= 0 && h > 0 && w > 0 && y + h <= 1 + 1e-12 && x + w <= 1 + 1e-12;
      }),
    );
    expect(parseBounds('[0,0]', size)).toBeNull();
  });
});
