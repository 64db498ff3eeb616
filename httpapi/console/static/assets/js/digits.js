// The drawing pad of the digits demo and its reduction to the 8×8 image
// of scikit-learn's digits: the drawing's bounding box is scaled into a
// 32×32 bitmap (as the UCI optdigits preprocessing did), and each 4×4
// block's count of set pixels is one input, 0…16.

export class Pad {
  constructor(canvas, cursorEl, onChange) {
    this.c = canvas;
    this.cursorEl = cursorEl;
    this.g = canvas.getContext('2d', { willReadFrequently: true });
    this.onChange = onChange;
    this.cursor = { x: 3, y: 3 };
    this.last = null;
    canvas.addEventListener('pointerdown', (e) => {
      canvas.setPointerCapture(e.pointerId);
      this.last = this.at(e);
      this.dot(this.last);
      e.preventDefault();
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!this.last) return;
      const p = this.at(e);
      this.line(this.last, p);
      this.last = p;
    });
    const end = () => { if (this.last) { this.last = null; this.onChange(this); } };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener('keydown', (e) => this.key(e));
    canvas.addEventListener('blur', () => { cursorEl.hidden = true; });
    this.clear();
  }

  at(e) {
    const r = this.c.getBoundingClientRect();
    return { x: (e.clientX - r.left) * (this.c.width / r.width), y: (e.clientY - r.top) * (this.c.height / r.height) };
  }

  pen() {
    const g = this.g;
    g.strokeStyle = g.fillStyle = '#000';
    g.lineWidth = this.c.width / 11;
    g.lineCap = g.lineJoin = 'round';
    return g;
  }

  dot(p) {
    const g = this.pen();
    g.beginPath();
    g.arc(p.x, p.y, g.lineWidth / 2, 0, 2 * Math.PI);
    g.fill();
  }

  line(a, b) {
    const g = this.pen();
    g.beginPath();
    g.moveTo(a.x, a.y);
    g.lineTo(b.x, b.y);
    g.stroke();
  }

  clear() {
    this.g.clearRect(0, 0, this.c.width, this.c.height);
    this.onChange(this);
  }

  // The keyboard draws on an 8×8 grid of cells.
  key(e) {
    const cur = this.cursor;
    const cell = this.c.width / 8;
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (moves[e.key]) {
      cur.x = Math.min(7, Math.max(0, cur.x + moves[e.key][0]));
      cur.y = Math.min(7, Math.max(0, cur.y + moves[e.key][1]));
    } else if (e.key === ' ' || e.key === 'Enter') {
      this.g.fillStyle = '#000';
      this.g.fillRect(cur.x * cell, cur.y * cell, cell, cell);
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      this.g.clearRect(cur.x * cell, cur.y * cell, cell, cell);
    } else if (e.key === 'c' || e.key === 'C') {
      this.clear();
    } else {
      return;
    }
    e.preventDefault();
    Object.assign(this.cursorEl.style, { left: cur.x * 12.5 + '%', top: cur.y * 12.5 + '%' });
    this.cursorEl.hidden = false;
    this.onChange(this);
  }

  empty() { return this.pixels().every((v) => v === 0); }

  // pixels gives the 64 inputs, row by row, each 0…16.
  pixels() {
    const { width: W, height: H } = this.c;
    const src = this.g.getImageData(0, 0, W, H).data;
    let x0 = W, y0 = H, x1 = -1, y1 = -1;
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
      if (src[(y * W + x) * 4 + 3] > 32) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
    }
    const out = new Array(64).fill(0);
    if (x1 < 0) return out;
    const bw = x1 - x0 + 1, bh = y1 - y0 + 1, side = Math.max(bw, bh);
    const s = 32 / side;
    const dw = Math.max(1, Math.round(bw * s)), dh = Math.max(1, Math.round(bh * s));
    const small = document.createElement('canvas');
    small.width = small.height = 32;
    const sg = small.getContext('2d', { willReadFrequently: true });
    sg.drawImage(this.c, x0, y0, bw, bh, Math.floor((32 - dw) / 2), Math.floor((32 - dh) / 2), dw, dh);
    const bits = sg.getImageData(0, 0, 32, 32).data;
    for (let y = 0; y < 32; y++) for (let x = 0; x < 32; x++) {
      if (bits[(y * 32 + x) * 4 + 3] >= 128) out[(y >> 2) * 8 + (x >> 2)]++;
    }
    return out;
  }
}

// drawGrid shows the 8×8 inputs as grey levels.
export function drawGrid(canvas, values) {
  const g = canvas.getContext('2d');
  const cell = canvas.width / 8;
  for (let i = 0; i < 64; i++) {
    const v = 255 - Math.round((values[i] / 16) * 255);
    g.fillStyle = `rgb(${v},${v},${v})`;
    g.fillRect((i % 8) * cell, Math.floor(i / 8) * cell, cell, cell);
  }
}
