package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		hi   float64
		want []float64
	}{
		{0, []float64{0, 1}},
		{10, []float64{0, 2, 4, 6, 8, 10}},
		{4999, []float64{0, 1000, 2000, 3000, 4000, 5000}},
		{7.3, []float64{0, 2, 4, 6, 8}},
		{0.42, []float64{0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, niceTicks(tc.hi)); diff != "" {
			t.Errorf("niceTicks(%v) (-want +got):\n%s", tc.hi, diff)
		}
	}
}

func TestDrawLineEndsInEveryDirection(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 50, 50))
	red := color.RGBA{R: 0xff, A: 0xff}
	for _, l := range [][4]int{{5, 5, 45, 10}, {5, 5, 10, 45}, {45, 45, 5, 40}, {40, 45, 45, 5}, {20, 20, 20, 20}, {5, 30, 45, 30}} {
		drawLine(img, l[0], l[1], l[2], l[3], red)
		for _, p := range [][2]int{{l[0], l[1]}, {l[2], l[3]}} {
			if img.RGBAAt(p[0], p[1]) != red {
				t.Errorf("line %v does not reach (%d,%d)", l, p[0], p[1])
			}
		}
	}
}

func TestPlotBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.png")
	lines := []series{
		{name: yardmasterName, color: contenderColors[yardmasterName], points: []Point{{0.2, 1}, {1, 500}, {2.1, 1000}}},
		{name: kubeSchedulerName, color: contenderColors[kubeSchedulerName], points: []Point{{1.5, 1}, {4, 1000}}},
	}
	if err := plotBound(path, "backlog drain: 10 nodes, 1000 pods, basic", lines); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got != (image.Point{plotW, plotH}) {
		t.Errorf("size %v, want %dx%d", got, plotW, plotH)
	}
	// Both lines are drawn: each colour appears.
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	for _, s := range lines {
		if !seen[s.color] {
			t.Errorf("no pixel of %s's colour", s.name)
		}
	}
}
