//go:build !race

package snn_test

const raceEnabled = false
