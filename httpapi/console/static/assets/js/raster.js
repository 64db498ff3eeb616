// Rasters of spikes on a canvas: the live per-layer view of chat, and the
// time × neuron view of a network run.

const palette = ['#4f8cff', '#f5a524', '#17c964', '#f31260', '#9353d3', '#06b7db', '#ff7a45', '#a3e635'];

function fit(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
  const hgt = Math.max(1, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== hgt) { canvas.width = w; canvas.height = hgt; }
  return dpr;
}

function css(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

// LayerRaster draws, per generated token, the neurons of each layer that
// fired (the "neuro":{"activity":true} stream extension).
export class LayerRaster {
  constructor(canvas, legend) {
    this.canvas = canvas;
    this.legend = legend;
    this.reset();
    new ResizeObserver(() => this.scheduleDraw()).observe(canvas);
  }

  reset() {
    this.layers = new Map(); // name → {neurons, color, total}
    this.columns = []; // [{label, byLayer: Map(name → spikes[])}]
    this.spikes = 0;
    this.draw();
  }

  // push adds one token's activity: [{layer, neurons, spikes:[i,…]}].
  push(activity, label) {
    const col = { label, byLayer: new Map() };
    for (const a of activity || []) {
      const name = String(a.layer);
      let l = this.layers.get(name);
      if (!l) {
        l = { neurons: 0, color: palette[this.layers.size % palette.length], total: 0, last: 0 };
        this.layers.set(name, l);
      }
      const spikes = Array.isArray(a.spikes) ? a.spikes : [];
      l.neurons = Math.max(l.neurons, a.neurons || 0, ...spikes.map((i) => i + 1));
      l.total += spikes.length;
      l.last = spikes.length;
      this.spikes += spikes.length;
      col.byLayer.set(name, spikes);
    }
    this.columns.push(col);
    this.scheduleDraw();
  }

  scheduleDraw() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.draw(); });
  }

  draw() {
    const c = this.canvas;
    const dpr = fit(c);
    const g = c.getContext('2d');
    g.fillStyle = css('--raster-bg', '#0b1020');
    g.fillRect(0, 0, c.width, c.height);
    c.dataset.columns = this.columns.length;
    c.dataset.spikes = this.spikes;
    c.dataset.layers = this.layers.size;
    const layers = [...this.layers.entries()];
    if (!layers.length) {
      g.fillStyle = css('--muted', '#8892a6');
      g.font = `${12 * dpr}px system-ui, sans-serif`;
      g.fillText('Activity appears here as tokens are generated.', 10 * dpr, 20 * dpr);
      this.renderLegend();
      return;
    }
    const gap = 3 * dpr;
    const bandH = (c.height - gap * (layers.length - 1)) / layers.length;
    // Columns are wide while there are few tokens, then narrow to 3 px
    // and scroll, the newest on the right.
    const colW = Math.max(Math.round(3 * dpr), Math.min(Math.round(16 * dpr), Math.floor(c.width / Math.max(1, this.columns.length))));
    const visible = Math.floor(c.width / colW);
    const first = Math.max(0, this.columns.length - visible);
    layers.forEach(([name, l], k) => {
      const top = k * (bandH + gap);
      const rowH = Math.max(1, bandH / Math.max(1, l.neurons));
      g.fillStyle = l.color;
      for (let x = first; x < this.columns.length; x++) {
        const spikes = this.columns[x].byLayer.get(name);
        if (!spikes) continue;
        const px = (x - first) * colW;
        for (const i of spikes) g.fillRect(px, top + (i / Math.max(1, l.neurons)) * bandH, colW - 1, rowH);
      }
      g.fillStyle = 'rgba(0,0,0,0.55)';
      g.font = `${11 * dpr}px system-ui, sans-serif`;
      const text = name;
      g.fillRect(0, top, g.measureText(text).width + 8 * dpr, 15 * dpr);
      g.fillStyle = '#fff';
      g.fillText(text, 4 * dpr, top + 11 * dpr);
    });
    this.renderLegend();
  }

  renderLegend() {
    if (!this.legend) return;
    this.legend.replaceChildren(...[...this.layers.entries()].map(([name, l]) => {
      const li = document.createElement('li');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.dataset.color = l.color;
      sw.style.background = l.color;
      li.append(sw, `${name}: ${l.neurons} neurons, ${l.last} fired on the last token, ${l.total} in all`);
      return li;
    }));
    if (this.columns.length) {
      const li = document.createElement('li');
      li.className = 'hint';
      li.textContent = `${this.columns.length} tokens, ${this.spikes} spikes shown`;
      this.legend.append(li);
    }
  }
}

// drawEvents draws spikes [[t, i], …] of n neurons over T steps, time
// across and neuron index down (labelled 0…n-1 when n is small).
export function drawEvents(canvas, events, T, n) {
  const dpr = fit(canvas);
  const g = canvas.getContext('2d');
  g.fillStyle = css('--raster-bg', '#0b1020');
  g.fillRect(0, 0, canvas.width, canvas.height);
  if (!T || !n) return;
  const left = n <= 16 ? 16 * dpr : 0;
  const w = (canvas.width - left) / T;
  const hh = canvas.height / n;
  g.font = `${Math.min(10 * dpr, hh * 0.8)}px system-ui, sans-serif`;
  g.fillStyle = css('--muted', '#8892a6');
  if (left) for (let i = 0; i < n; i++) g.fillText(String(i), 3 * dpr, i * hh + hh * 0.75);
  g.fillStyle = palette[0];
  for (const [t, i] of events || []) g.fillRect(left + t * w, i * hh + 1, Math.max(1, w - 0.5), Math.max(1, hh - 2));
  canvas.dataset.spikes = (events || []).length;
}

// drawTraces draws values[t][i] (a T × n matrix, such as the membrane of
// an output layer that does not spike) as a heat map, time across and
// neuron down, each neuron scaled to its own range.
export function drawTraces(canvas, values) {
  const dpr = fit(canvas);
  const g = canvas.getContext('2d');
  g.fillStyle = css('--raster-bg', '#0b1020');
  g.fillRect(0, 0, canvas.width, canvas.height);
  const T = values.length, n = T ? values[0].length : 0;
  if (!T || !n) return;
  const left = n <= 16 ? 16 * dpr : 0;
  const w = (canvas.width - left) / T, hh = canvas.height / n;
  g.font = `${Math.min(10 * dpr, hh * 0.8)}px system-ui, sans-serif`;
  for (let i = 0; i < n; i++) {
    let lo = Infinity, hi = -Infinity;
    for (let t = 0; t < T; t++) { lo = Math.min(lo, values[t][i]); hi = Math.max(hi, values[t][i]); }
    for (let t = 0; t < T; t++) {
      const a = hi > lo ? (values[t][i] - lo) / (hi - lo) : 0;
      g.fillStyle = `rgba(79,140,255,${a.toFixed(3)})`;
      g.fillRect(left + t * w, i * hh + 1, Math.max(1, w), Math.max(1, hh - 2));
    }
    g.fillStyle = css('--muted', '#8892a6');
    if (left) g.fillText(String(i), 3 * dpr, i * hh + hh * 0.75);
  }
}
