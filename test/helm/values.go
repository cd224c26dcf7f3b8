// Values as Helm v3 builds them before rendering: `-f` files merged, `--set` arguments parsed as
// pkg/strvals reads them, the user's values coalesced over the chart's values.yaml
// (pkg/chartutil/coalesce.go), and the result checked against the chart's values.schema.json with
// gojsonschema, as pkg/chartutil/jsonschema.go ValidateAgainstSchema does in Helm v3 before 3.18
// (the Go library Debian packages: golang-github-xeipuuv-gojsonschema-dev).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xeipuuv/gojsonschema"
	"sigs.k8s.io/yaml"
)

func istable(v interface{}) bool {
	_, ok := v.(map[string]interface{})
	return ok
}

// coalesceTables merges src into dst; dst wins (chartutil.CoalesceTables).
func coalesceTables(dst, src map[string]interface{}) map[string]interface{} {
	if src == nil {
		return dst
	}
	if dst == nil {
		return src
	}
	for key, val := range src {
		if dv, ok := dst[key]; ok && dv == nil {
			delete(dst, key)
		} else if !ok {
			dst[key] = val
		} else if istable(val) && istable(dv) {
			coalesceTables(dv.(map[string]interface{}), val.(map[string]interface{}))
		}
	}
	return dst
}

// coalesceValues puts the chart's values under the user's (chartutil.coalesceValues).
func coalesceValues(chartValues, v map[string]interface{}) map[string]interface{} {
	for key, val := range chartValues {
		if value, ok := v[key]; ok {
			if value == nil {
				delete(v, key)
			} else if dest, ok := value.(map[string]interface{}); ok {
				if src, ok := val.(map[string]interface{}); ok {
					coalesceTables(dest, src)
				}
			}
		} else {
			v[key] = val
		}
	}
	return v
}

// mergeMaps is how `-f` files combine (pkg/cli/values/options.go): later files win, maps merge.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]interface{}); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]interface{}); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// typedVal is strvals' typing of a --set value: true/false/null (any case), integers not starting
// with 0 (and 0 itself) as int64, anything else a string.
func typedVal(val string) interface{} {
	switch strings.ToLower(val) {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if val == "0" {
		return int64(0)
	}
	if len(val) > 0 && val[0] != '0' {
		if i, err := strconv.ParseInt(val, 10, 64); err == nil {
			return i
		}
	}
	return val
}

// maxIndex is the largest list index a --set name may use (strvals.MaxIndex).
const maxIndex = 65536

// segment is one step of a --set name: a map key, or a list index.
type segment struct {
	key   string
	index int
	isIdx bool
}

// setParser reads one --set argument: comma-separated NAME=VALUE pairs. A NAME is map keys joined
// by dots, each optionally followed by list indexes (a.b[0].c); a backslash takes the next character
// as it is (nodeSelector.kubernetes\.io/os=linux). A VALUE in braces is a list ({a,b}); each value
// or list item is typed by typedVal.
type setParser struct {
	in []rune
	at int
}

// until reads up to one of the runes in stop (backslash escapes honoured) and returns the text and
// the rune it stopped at (0 at the end of the input).
func (p *setParser) until(stop string) (string, rune) {
	var out []rune
	for p.at < len(p.in) {
		r := p.in[p.at]
		p.at++
		if r == '\\' && p.at < len(p.in) {
			out = append(out, p.in[p.at])
			p.at++
			continue
		}
		if strings.ContainsRune(stop, r) {
			return string(out), r
		}
		out = append(out, r)
	}
	return string(out), 0
}

// name reads a NAME up to its '='.
func (p *setParser) name() ([]segment, error) {
	var path []segment
	for {
		key, stop := p.until("=[.,")
		path = append(path, segment{key: key})
		for stop == '[' {
			text, closed := p.until("]")
			i, err := strconv.Atoi(text)
			if closed != ']' || err != nil {
				return nil, fmt.Errorf("error parsing index: %q is not a list index", text)
			}
			if i < 0 || i > maxIndex {
				return nil, fmt.Errorf("index %d is out of range (0 to %d)", i, maxIndex)
			}
			path = append(path, segment{index: i, isIdx: true})
			if p.at >= len(p.in) {
				return nil, fmt.Errorf("key %q has no value", key)
			}
			stop = p.in[p.at]
			p.at++
			if stop != '=' && stop != '.' && stop != '[' {
				return nil, fmt.Errorf("unexpected data at end of array index: %q", string(stop))
			}
		}
		switch stop {
		case '=':
			return path, nil
		case '.':
			continue
		default:
			return nil, fmt.Errorf("key %q has no value", key)
		}
	}
}

// value reads a VALUE and the comma after it.
func (p *setParser) value() (interface{}, error) {
	if p.at < len(p.in) && p.in[p.at] == '{' {
		p.at++
		list := []interface{}{}
		for {
			item, stop := p.until(",}")
			if stop == 0 {
				return nil, errors.New("list must terminate with '}'")
			}
			list = append(list, typedVal(item))
			if stop == '}' {
				if p.at < len(p.in) && p.in[p.at] == ',' {
					p.at++
				}
				return list, nil
			}
		}
	}
	text, _ := p.until(",")
	return typedVal(text), nil
}

// assign puts val at path inside current (a map, a list or nothing yet) and returns the result.
func assign(current interface{}, path []segment, val interface{}) interface{} {
	if len(path) == 0 {
		return val
	}
	step := path[0]
	if step.isIdx {
		list, _ := current.([]interface{})
		for len(list) <= step.index {
			list = append(list, nil)
		}
		list[step.index] = assign(list[step.index], path[1:], val)
		return list
	}
	table, ok := current.(map[string]interface{})
	if !ok {
		table = map[string]interface{}{}
	}
	table[step.key] = assign(table[step.key], path[1:], val)
	return table
}

// setValue applies one --set argument to the user's values.
func setValue(into map[string]interface{}, arg string) error {
	p := &setParser{in: []rune(arg)}
	for p.at < len(p.in) {
		path, err := p.name()
		if err != nil {
			return fmt.Errorf("failed parsing --set data: %w", err)
		}
		val, err := p.value()
		if err != nil {
			return fmt.Errorf("failed parsing --set data: %w", err)
		}
		if path[0].key == "" {
			continue
		}
		into[path[0].key] = assign(into[path[0].key], path[1:], val)
	}
	return nil
}

// validateValues checks the coalesced values against CHART_DIR/values.schema.json, when the chart
// has one, with Helm's error text.
func validateValues(dir, chart string, values map[string]interface{}) error {
	schema, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		return err
	}
	valuesJSON, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	if bytes.Equal(valuesJSON, []byte("null")) {
		valuesJSON = []byte("{}")
	}
	result, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewBytesLoader(valuesJSON))
	if err != nil {
		return fmt.Errorf("%s: values.schema.json: %w", chart, err)
	}
	if result.Valid() {
		return nil
	}
	var sb strings.Builder
	for _, desc := range result.Errors() {
		sb.WriteString(fmt.Sprintf("- %s\n", desc))
	}
	return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s", chart, sb.String())
}
