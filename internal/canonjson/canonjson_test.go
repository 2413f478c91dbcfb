package canonjson

import "testing"

func TestCanonicalize(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := Canonicalize([]byte(in))
		if err != nil {
			t.Fatalf("Canonicalize(%s): %v", in, err)
		}
		if string(got) != want {
			t.Fatalf("Canonicalize(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	f(`{"b": 1, "a": {"d": [3, 2, {"z": true, "y": null}], "c": "x"}}`, `{"a":{"c":"x","d":[3,2,{"y":null,"z":true}]},"b":1}`)
	f(" [ 1.50 , 1e3, -0 ] ", `[1.50,1e3,-0]`) // numbers are kept as written, not re-rounded
	f(`{"html":"<a&b>","uni":"é\u00e9"}`, `{"html":"<a&b>","uni":"éé"}`)
	if _, err := Canonicalize([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Fatal("two documents accepted")
	}
	if _, err := Canonicalize([]byte(`{"a":`)); err == nil {
		t.Fatal("truncated document accepted")
	}
}

func TestMarshalIsOrderIndependent(t *testing.T) {
	type s struct {
		Z int            `json:"z"`
		A map[string]any `json:"a"`
	}
	a, err := Marshal(s{Z: 1, A: map[string]any{"y": 2, "x": []any{"q", 1.5}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Marshal(map[string]any{"a": map[string]any{"x": []any{"q", 1.5}, "y": 2}, "z": 1})
	if string(a) != string(b) || string(a) != `{"a":{"x":["q",1.5],"y":2},"z":1}` {
		t.Fatalf("%s != %s", a, b)
	}
}
