package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadFile reads, overrides and validates the case at path.
func LoadFile(path string, sets []string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read case: %w", err)
	}
	return Parse(path, data, sets)
}

// Parse validates a case document. sets are "dotted.key=value" overrides
// applied before validation; the value is read as YAML, so
// "workload.threads=[1,2,4]" makes a sweep. The error, when not nil, is an
// Errors listing every problem with its file, line and field.
func Parse(file string, data []byte, sets []string) (*Case, error) {
	d := &decoder{file: file, over: map[*yaml.Node]string{}}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: "empty case file"}}
		}
		return nil, Errors{{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Msg: "more than one YAML document; a case file holds one"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Line: root.Line, Column: root.Column, Msg: "a case file is a mapping (name: ..., driver: ...)"}}
	}
	for _, s := range sets {
		if err := d.applySet(root, s); err != nil {
			return nil, Errors{{File: "--set " + s, Msg: err.Error()}}
		}
	}
	c := d.decodeCase(root)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	c.Source, c.Raw, c.Sets = file, data, append([]string(nil), sets...)
	return c, nil
}

// applySet sets a dotted path in the mapping tree to a YAML value, creating
// intermediate mappings as needed.
func (d *decoder) applySet(root *yaml.Node, set string) error {
	key, val, ok := strings.Cut(set, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, e.g. workload.threads=4")
	}
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(val), &vdoc); err != nil {
		return fmt.Errorf("value: %v", err)
	}
	var vnode *yaml.Node
	if len(vdoc.Content) == 0 {
		vnode = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	} else {
		vnode = vdoc.Content[0]
	}
	markAll(vnode, set, d.over)
	parts := strings.Split(key, ".")
	node := root
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("empty path element in %q", key)
		}
		if node.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(parts[:i], "."))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(node.Content); j += 2 {
			if node.Content[j].Value == p {
				next = node.Content[j+1]
				if i == len(parts)-1 {
					node.Content[j+1] = vnode
				}
				break
			}
		}
		if i == len(parts)-1 {
			if next == nil {
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}
				d.over[k] = set
				node.Content = append(node.Content, k, vnode)
			}
			return nil
		}
		if next == nil || next.Tag == "!!null" {
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			d.over[k], d.over[m] = set, set
			if next == nil {
				node.Content = append(node.Content, k, m)
			} else {
				*next = *m
				d.over[next] = set
				m = next
			}
			next = m
		}
		node = next
	}
	return nil
}

func markAll(n *yaml.Node, origin string, over map[*yaml.Node]string) {
	over[n] = origin
	for _, c := range n.Content {
		markAll(c, origin, over)
	}
}
