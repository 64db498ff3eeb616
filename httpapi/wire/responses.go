package wire

import "encoding/json"

// ResponseRequest is the body of POST /v1/responses. Input is a string or
// a list of InputMessage.
type ResponseRequest struct {
	Model              string            `json:"model"`
	Input              any               `json:"input"`
	Instructions       string            `json:"instructions,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Store              *bool             `json:"store,omitempty"`
	MaxOutputTokens    int               `json:"max_output_tokens,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
	TopP               *float64          `json:"top_p,omitempty"`
	Stream             bool              `json:"stream,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	User               string            `json:"user,omitempty"`
}

// InputMessage is one message of a response's input. Content is a string
// or a list of InputText.
type InputMessage struct {
	Type    string `json:"type,omitempty"` // "message"
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// InputText is a text part of an input message's content.
type InputText struct {
	Type string `json:"type"` // "input_text" (or "output_text" in an assistant's message)
	Text string `json:"text"`
}

// Response is a response object: the result of POST /v1/responses, and
// what GET /v1/responses/{id} returns.
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"` // "response"
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"` // "completed", "incomplete", "failed" or "in_progress"
	Model              string             `json:"model"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Instructions       *string            `json:"instructions"`
	Output             []OutputMessage    `json:"output"`
	OutputText         string             `json:"output_text"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Error              *ResponseError     `json:"error"`
	Store              bool               `json:"store"`
	Temperature        float64            `json:"temperature"`
	TopP               float64            `json:"top_p"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Metadata           map[string]string  `json:"metadata"`
	User               *string            `json:"user,omitempty"`
	// The options of a text answer, as OpenAI sends them: no tools, plain
	// text, no truncation.
	Tools             []json.RawMessage  `json:"tools"`
	ToolChoice        string             `json:"tool_choice"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Text              ResponseTextFormat `json:"text"`
	Truncation        string             `json:"truncation"`
	Usage             *ResponseUsage     `json:"usage"`
	// Neuro is what the answer cost the device (an extension).
	Neuro *NeuromorphicUsage `json:"neuro,omitempty"`
}

// ResponseTextFormat is a response's text option: plain text.
type ResponseTextFormat struct {
	Format struct {
		Type string `json:"type"` // "text"
	} `json:"format"`
}

// OutputMessage is the assistant's message in a response's output.
type OutputMessage struct {
	Type    string       `json:"type"` // "message"
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"` // "assistant"
	Content []OutputText `json:"content"`
}

// OutputText is the text of an output message.
type OutputText struct {
	Type        string            `json:"type"` // "output_text"
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
}

// IncompleteDetails says why a response stopped short.
type IncompleteDetails struct {
	Reason string `json:"reason"` // "max_output_tokens"
}

// ResponseError is why a response failed.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ResponseUsage counts a response's tokens. InputTokens are the whole
// context the model saw in the turn, earlier turns included; CachedTokens
// the part of it resumed from a stored state instead of read.
type ResponseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

// InputTokensDetails splits a response's input tokens.
type InputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputTokensDetails splits a response's output tokens.
type OutputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// ResponseDeleted is the result of DELETE /v1/responses/{id}.
type ResponseDeleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response"
	Deleted bool   `json:"deleted"`
}

// ResponseEvent is one event of a streamed response: Type says which,
// and the fields that event carries are set.
type ResponseEvent struct {
	Type           string         `json:"type"`
	SequenceNumber int            `json:"sequence_number"`
	Response       *Response      `json:"response,omitempty"`
	OutputIndex    *int           `json:"output_index,omitempty"`
	ContentIndex   *int           `json:"content_index,omitempty"`
	ItemID         string         `json:"item_id,omitempty"`
	Item           *OutputMessage `json:"item,omitempty"`
	Part           *OutputText    `json:"part,omitempty"`
	Delta          *string        `json:"delta,omitempty"`
	Text           *string        `json:"text,omitempty"`
	// An error event's.
	Code    *string `json:"code,omitempty"`
	Message string  `json:"message,omitempty"`
	Param   *string `json:"param,omitempty"`
}
