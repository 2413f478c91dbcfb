// Package canonjson encodes values as canonical JSON: object keys sorted
// bytewise, no insignificant whitespace, numbers as Go's encoding/json writes
// them, strings escaped as encoding/json escapes them (HTML escaping off).
// Two values that are equal as JSON encode to the same bytes, so a digest of
// the encoding identifies the value whatever the field order or formatting
// of the source it was read from.
package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Marshal returns the canonical JSON encoding of v.
func Marshal(v any) ([]byte, error) {
	raw, err := marshalPlain(v)
	if err != nil {
		return nil, err
	}
	return Canonicalize(raw)
}

// Canonicalize re-encodes a JSON document canonically.
func Canonicalize(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonjson: decode: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonjson: trailing data after JSON document")
	}
	var buf bytes.Buffer
	if err := encode(&buf, tree); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonjson: encode: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func encode(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, err := marshalPlain(k)
			if err != nil {
				return err
			}
			buf.Write(kb)
			buf.WriteByte(':')
			if err := encode(buf, t[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encode(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		b, err := marshalPlain(t)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}
