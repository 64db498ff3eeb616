package wire

import "strconv"

// ErrorResponse is the body of every failed response, and the one
// event that ends a stream that fails after it started.
type ErrorResponse struct {
	Error *ErrorBody `json:"error"`
}

// ErrorBody is an error as the API sends it. Type is one of
// "invalid_request_error", "authentication_error", "not_found_error",
// "rate_limit_error" and "server_error"; Param and Code are null where
// they do not apply.
type ErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// AppendError appends {"error": …} as encoding/json writes an
// ErrorResponse whose Param and Code are nil where param and code are
// empty.
func AppendError(b []byte, message, typ, param, code string) []byte {
	b = append(b, `{"error":{"message":`...)
	b = AppendString(b, message)
	b = append(b, `,"type":`...)
	b = AppendString(b, typ)
	b = append(b, `,"param":`...)
	b = appendNullString(b, param)
	b = append(b, `,"code":`...)
	b = appendNullString(b, code)
	return append(b, "}}"...)
}

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return AppendString(b, s)
}

// AppendInt appends i in decimal.
func AppendInt(b []byte, i int64) []byte { return strconv.AppendInt(b, i, 10) }
