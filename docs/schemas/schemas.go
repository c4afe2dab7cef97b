// Package schemas holds the JSON Schemas of what yardmaster prints for
// scripts: `explain`, `explain load`, `explain bandwidth` and `simulate`
// with -o json or -o yaml, and `config validate -o json`. The tests of
// the commands and the e2e tests validate real output against them.
package schemas

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// OutputV1alpha1File is the file of the yardmaster.io/v1alpha1 schema.
const OutputV1alpha1File = "yardmaster.io_v1alpha1.schema.json"

// OutputV1alpha1 is the JSON Schema of the yardmaster.io/v1alpha1 objects
// (Explanation, SimulationResult, LoadExplanation, BandwidthExplanation,
// ConfigValidation).
//
//go:embed yardmaster.io_v1alpha1.schema.json
var OutputV1alpha1 []byte

// CompileOutputV1alpha1 compiles OutputV1alpha1.
func CompileOutputV1alpha1() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OutputV1alpha1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", OutputV1alpha1File, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(OutputV1alpha1File, doc); err != nil {
		return nil, err
	}
	return c.Compile(OutputV1alpha1File)
}
