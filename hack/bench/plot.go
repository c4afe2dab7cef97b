package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strconv"
)

// series is one line of a plot.
type series struct {
	name   string
	color  color.RGBA
	points []Point
}

// Colours of the contenders, the same in every plot.
var contenderColors = map[string]color.RGBA{
	yardmasterName:    {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	kubeSchedulerName: {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	ceilingName:       {R: 0x80, G: 0x80, B: 0x80, A: 0xff}, // grey
	ceilingEventsName: {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	baselineName:      {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
}

// Plot geometry in pixels.
const (
	plotW, plotH            = 960, 560
	marginLeft, marginRight = 90, 30
	marginTop, marginBottom = 60, 70
	textScale               = 2
	tickLen                 = 6
	lineWidth               = 2
	legendRowGap            = 24
)

// plotBound draws pods bound (y) over seconds since the scheduler started
// (x), one line per series, with axes, ticks and a legend.
func plotBound(path, title string, lines []series) error {
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	black := color.RGBA{0x20, 0x20, 0x20, 0xff}
	grid := color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	fillRect(img, 0, 0, plotW, plotH, white)

	var xMax float64
	var yMax int
	for _, s := range lines {
		for _, p := range s.points {
			xMax = math.Max(xMax, p.T)
			yMax = max(yMax, p.N)
		}
	}
	xTicks := niceTicks(xMax)
	yTicks := niceTicks(float64(yMax))
	xHi, yHi := xTicks[len(xTicks)-1], yTicks[len(yTicks)-1]

	x0, x1 := marginLeft, plotW-marginRight
	y0, y1 := plotH-marginBottom, marginTop // y grows downwards
	px := func(t float64) int { return x0 + int(math.Round(t/xHi*float64(x1-x0))) }
	py := func(n float64) int { return y0 - int(math.Round(n/yHi*float64(y0-y1))) }

	for _, t := range xTicks {
		x := px(t)
		fillRect(img, x, y1, 1, y0-y1, grid)
		fillRect(img, x, y0, 1, tickLen, black)
		l := formatTick(t)
		drawText(img, x-textWidth(l, textScale)/2, y0+tickLen+6, l, textScale, black)
	}
	for _, n := range yTicks {
		y := py(n)
		fillRect(img, x0, y, x1-x0, 1, grid)
		fillRect(img, x0-tickLen, y, tickLen, 1, black)
		l := formatTick(n)
		drawText(img, x0-tickLen-6-textWidth(l, textScale), y-glyphH*textScale/2, l, textScale, black)
	}
	fillRect(img, x0, y1, 1, y0-y1+1, black) // y axis
	fillRect(img, x0, y0, x1-x0+1, 1, black) // x axis

	drawText(img, (plotW-textWidth(title, textScale))/2, 20, title, textScale, black)
	xl := "seconds since the scheduler started"
	drawText(img, (x0+x1-textWidth(xl, textScale))/2, plotH-28, xl, textScale, black)
	drawText(img, 8, y1-30, "pods bound", textScale, black)

	for _, s := range lines {
		prevX, prevY := px(0), py(0)
		for j, p := range s.points {
			x, y := px(p.T), py(float64(p.N))
			if j == 0 {
				// Nothing is bound until the first binding: flat, then up.
				drawLine(img, prevX, prevY, x, prevY, s.color)
				prevX = x
			}
			drawLine(img, prevX, prevY, x, y, s.color)
			prevX, prevY = x, y
		}
	}
	// The legend goes bottom right, which curves of pods bound over time
	// never cross: by the time they get there, they are high.
	legendW := 0
	for _, s := range lines {
		legendW = max(legendW, 38+textWidth(s.name, textScale))
	}
	lx, ly := x1-legendW-24, y0-len(lines)*legendRowGap-20
	fillRect(img, lx-8, ly-8, legendW+16, len(lines)*legendRowGap+8, white)
	for i, s := range lines {
		y := ly + i*legendRowGap
		fillRect(img, lx, y+3, 28, 8, s.color)
		drawText(img, lx+38, y, s.name, textScale, black)
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("encoding %q: %w", path, err)
	}
	return f.Close()
}

// drawLine draws a lineWidth-thick line with Bresenham's algorithm.
func drawLine(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		fillRect(img, x0-lineWidth/2, y0-lineWidth/2, lineWidth, lineWidth, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e // once per step: both tests compare the same error
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int { return max(v, -v) }

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// niceTicks returns 0 and evenly spaced ticks of 1, 2 or 5 × 10^k up to
// the first tick at or above hi, about five of them.
func niceTicks(hi float64) []float64 {
	if hi <= 0 {
		return []float64{0, 1}
	}
	raw := hi / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	ticks := []float64{0}
	for v := step; ; v += step {
		ticks = append(ticks, v)
		if v >= hi*(1-1e-9) {
			return ticks
		}
	}
}

// formatTick prints a tick value without float noise.
func formatTick(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 32)
}
