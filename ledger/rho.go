package ledger

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
)

// Rho is the long-term GPU-time fairness ratio ρ = ∫Alloc ÷ ∫FairShare over a
// window. ρ ≥ 1 means the entity received at least what it was owed; ρ < 1 is
// a sharing loss.
//
// A Rho is never NaN. The ratio is undefined when nothing was owed, so the
// policy is fixed here, once, for every caller:
//
//   - FairShare = 0 and Alloc = 0: ρ = 1. Nothing was owed and nothing was
//     received, which is exactly fair; such a window is never a sharing loss
//     (a job submitted and finished in one instant, a tenant with no demand
//     under Eq. 8).
//   - FairShare = 0 and Alloc > 0: ρ = +Inf. Service was received while
//     nothing was owed (borrowed capacity); it sorts after every finite ρ.
//
// Rho marshals to JSON as a number, or as the string "+Inf", so that encoders
// that reject infinities never fail on it.
type Rho float64

// Ratio returns ρ = alloc ÷ fair under the policy documented on [Rho].
// Negative or NaN inputs are treated as 0, since no account can be negative;
// callers that need to detect them validate before calling. An infinite
// FairShare gives 0 for a finite Alloc and 1 for an infinite one (never the
// NaN of Inf ÷ Inf).
func Ratio(alloc, fair GPUSeconds) Rho {
	a, f := float64(alloc), float64(fair)
	if !(a > 0) { // also catches NaN
		a = 0
	}
	if !(f > 0) {
		if a == 0 {
			return 1
		}
		return Rho(math.Inf(1))
	}
	if math.IsInf(f, 1) {
		if math.IsInf(a, 1) {
			return 1
		}
		return 0
	}
	return Rho(a / f)
}

// IsInf reports whether ρ is +Inf (service received while nothing was owed).
func (r Rho) IsInf() bool { return math.IsInf(float64(r), 1) }

// Loss reports whether ρ is below threshold: a sharing loss. The paper uses
// 1 for tenants and 0.95 for jobs.
func (r Rho) Loss(threshold float64) bool { return float64(r) < threshold }

// Compare orders two ρ values: -1 if r < o, 0 if equal, +1 if r > o. +Inf is
// greater than every finite value and equal to itself. It is the comparator
// that schedulers use to find the entity with the lowest ρ.
func (r Rho) Compare(o Rho) int { return cmp.Compare(float64(r), float64(o)) }

// String formats ρ with four decimals, or "+Inf".
func (r Rho) String() string {
	if r.IsInf() {
		return "+Inf"
	}
	return strconv.FormatFloat(float64(r), 'f', 4, 64)
}

// MarshalJSON encodes a finite ρ as a JSON number and +Inf as "+Inf". NaN
// and −Inf, which no account produces, fail with [ErrInvalidValue].
func (r Rho) MarshalJSON() ([]byte, error) {
	f := float64(r)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsNaN(f) || math.IsInf(f, -1):
		return nil, rhoError("Rho.MarshalJSON", "ρ is "+strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON accepts a JSON number ≥ 0 or the string "+Inf" (or "Inf").
// Anything else fails with [ErrInvalidValue] and leaves r as it was; JSON
// null leaves r as it was too, as encoding/json does for its own types.
func (r *Rho) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return rhoError("Rho.UnmarshalJSON", err.Error())
		}
		if s != "+Inf" && s != "Inf" {
			return rhoError("Rho.UnmarshalJSON", "a ρ given as a string must be \"+Inf\", not "+strconv.Quote(s))
		}
		*r = Rho(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return rhoError("Rho.UnmarshalJSON", err.Error())
	}
	if f < 0 {
		return rhoError("Rho.UnmarshalJSON", "ρ is negative: "+strconv.FormatFloat(f, 'g', -1, 64))
	}
	*r = Rho(f)
	return nil
}

// rhoError is the error of a ρ that cannot be encoded or decoded.
func rhoError(op, detail string) error {
	return &Error{Op: op, Err: ErrInvalidValue, Detail: detail}
}
