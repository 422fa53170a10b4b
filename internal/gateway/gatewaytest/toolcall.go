package gatewaytest

import "encoding/json"

// ToolCallOf reads a JSON-RPC request to the gateway: its method and, for a
// tools/call, the gateway tool and the server tool a call runs.
func ToolCallOf(body []byte) (method, tool, callTool string) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Tool string `json:"tool"`
			} `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Method, msg.Params.Name, msg.Params.Arguments.Tool

}
