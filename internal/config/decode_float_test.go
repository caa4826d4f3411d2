package config

import (
	"strings"
	"testing"
)

// TestNumberKeysTakeIntegersAndFloats catches the decoder refusing a
// float key written as an integer ("cpu_scale = 1") or as a float, and
// checks that a string there names what is wanted.
func TestNumberKeysTakeIntegersAndFloats(t *testing.T) {
	c, err := Load(writeFile(t, minimalTOML+"\n[compute]\ncpu_budget_ms = 50\ncpu_scale = 1.5\n"), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Compute.CPUBudgetMS != 50 || c.Compute.CPUScale != 1.5 {
		t.Errorf("compute %+v, want budget 50 and scale 1.5", c.Compute)
	}
	_, err = Load(writeFile(t, minimalTOML+"\n[compute]\ncpu_scale = \"2\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `compute.cpu_scale: found the string "2", wants a number`) {
		t.Errorf("a string for a number key: got %v", err)
	}
}
