package plot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default figure size and PNG resolution: 1080 × 600 pixels.
const (
	DefaultWidth  = 9 * vg.Inch
	DefaultHeight = 5 * vg.Inch
	DefaultDPI    = 120
)

// maxPixels bounds a PNG's size, checked before its image is allocated.
const maxPixels = 100 << 20

// ErrFormat is wrapped when a figure is asked for a format it cannot write.
var ErrFormat = errors.New("plot: unknown format")

// Figure is a plot and the size it is drawn at. Change Plot, Width,
// Height or DPI as you like before writing it; zero sizes mean the
// defaults.
type Figure struct {
	Plot          *gplot.Plot
	Width, Height vg.Length
	// DPI is the resolution of PNG output, in dots per inch.
	DPI int
}

func newFigure(title, xlabel, ylabel string) *Figure {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return &Figure{Plot: p, Width: DefaultWidth, Height: DefaultHeight, DPI: DefaultDPI}
}

// Encode draws the figure in the given format ("png", "svg" or "pdf") to
// w. An unknown format returns an error wrapping ErrFormat.
func (f *Figure) Encode(w io.Writer, format string) error {
	if f == nil || f.Plot == nil {
		return errors.New("plot: Encode of an empty figure")
	}
	wd, ht, dpi := f.Width, f.Height, f.DPI
	if wd == 0 {
		wd = DefaultWidth
	}
	if ht == 0 {
		ht = DefaultHeight
	}
	if dpi == 0 {
		dpi = DefaultDPI
	}
	if !(wd > 0 && ht > 0) || dpi < 0 {
		return fmt.Errorf("plot: figure size %v × %v at %d dpi: sizes must be positive", wd, ht, dpi)
	}
	var c vg.CanvasWriterTo
	switch strings.ToLower(format) {
	case "png":
		win, hin := float64(wd/vg.Inch), float64(ht/vg.Inch)
		if px := win * hin * float64(dpi) * float64(dpi); px > maxPixels {
			return fmt.Errorf("plot: figure %.1f × %.1f in at %d dpi is %.0f pixels, more than %d", win, hin, dpi, px, maxPixels)
		}
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(dpi))}
	case "svg":
		c = vgsvg.New(wd, ht)
	case "pdf":
		c = vgpdf.New(wd, ht)
	default:
		return fmt.Errorf("%w %q: want png, svg or pdf", ErrFormat, format)
	}
	f.Plot.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot: writing %s: %w", format, err)
	}
	return nil
}

// Save writes the figure to a file in the format its extension names
// (.png, .svg or .pdf). An unknown extension creates no file and returns
// an error wrapping ErrFormat.
func (f *Figure) Save(path string) (err error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return fmt.Errorf("%w: file %q: want a .png, .svg or .pdf extension", ErrFormat, path)
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer func() {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("plot: %w", cerr)
		}
	}()
	return f.Encode(file, format)
}
