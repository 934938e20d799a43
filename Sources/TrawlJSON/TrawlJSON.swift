// Streaming JSON extraction over yajl: lands with the streaming JSON issue.
