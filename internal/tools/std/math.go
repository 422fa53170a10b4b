package std

import (
	"context"
	"errors"
	"math"

	"github.com/pml-go/pml/internal/tools"
)

const twoNumbers = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`

const numberList = `{"type":"object","properties":{"values":{"type":"array","items":{"type":"number"},"description":"The numbers."}},"required":["values"],"additionalProperties":false}`

type pair struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type numbers struct {
	Values []float64 `json:"values"`
}

func mathTools() []tools.Func {
	binary := func(id, desc string, op func(a, b float64) (float64, error)) tools.Func {
		return tools.Typed(info(id, desc, twoNumbers, returnsNumber), func(_ context.Context, p pair) (any, error) {
			r, err := op(p.A, p.B)
			if err != nil {
				return nil, err
			}
			return finite(r)
		})
	}
	list := func(id, desc string, op func([]float64) (float64, error)) tools.Func {
		return tools.Typed(info(id, desc, numberList, returnsNumber), func(_ context.Context, n numbers) (any, error) {
			r, err := op(n.Values)
			if err != nil {
				return nil, err
			}
			return finite(r)
		})
	}
	return []tools.Func{
		binary("math:add", "Add two numbers: a + b.", func(a, b float64) (float64, error) { return a + b, nil }),
		binary("math:subtract", "Subtract b from a: a - b.", func(a, b float64) (float64, error) { return a - b, nil }),
		binary("math:multiply", "Multiply two numbers: a * b.", func(a, b float64) (float64, error) { return a * b, nil }),
		binary("math:divide", "Divide a by b: a / b. Fails when b is 0.", func(a, b float64) (float64, error) {
			if b == 0 {
				return 0, errors.New("division by zero")
			}
			return a / b, nil
		}),
		list("math:sum", "Sum of a list of numbers (0 for an empty list).", func(v []float64) (float64, error) {
			var s float64
			for _, x := range v {
				s += x
			}
			return s, nil
		}),
		list("math:mean", "Arithmetic mean of a non-empty list of numbers.", func(v []float64) (float64, error) {
			if len(v) == 0 {
				return 0, errors.New("values is empty")
			}
			var s float64
			for _, x := range v {
				s += x
			}
			return s / float64(len(v)), nil
		}),
		list("math:min", "Smallest of a non-empty list of numbers.", extremum(math.Min)),
		list("math:max", "Largest of a non-empty list of numbers.", extremum(math.Max)),
		tools.Typed(info("math:round",
			"Round a number to a number of decimal places (half away from zero).",
			`{"type":"object","properties":{
				"value":{"type":"number"},
				"decimals":{"type":"integer","minimum":0,"maximum":15,"default":0,"description":"Decimal places to keep."}
			},"required":["value"],"additionalProperties":false}`, returnsNumber),
			func(_ context.Context, a struct {
				Value    float64 `json:"value"`
				Decimals int     `json:"decimals"`
			}) (any, error) {
				p := math.Pow10(a.Decimals)
				return finite(math.Round(a.Value*p) / p)
			}),
	}
}

func extremum(pick func(a, b float64) float64) func([]float64) (float64, error) {
	return func(v []float64) (float64, error) {
		if len(v) == 0 {
			return 0, errors.New("values is empty")
		}
		r := v[0]
		for _, x := range v[1:] {
			r = pick(r, x)
		}
		return r, nil
	}
}

// finite refuses results JSON cannot carry (overflow to ±Inf, NaN).
func finite(x float64) (any, error) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, errors.New("result is not a finite number")
	}
	return x, nil
}
