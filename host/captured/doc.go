// Package captured is what the tee hands to capture and what capture makes of it: the Item
// on the capture queue (a chunk as forwarded, a line, or a gap), the pooled read buffers
// chunks lie in with the queue's byte bound, and the Splitter that turns each direction's
// chunks back into lines and gaps. The tee produces items (it reads into a Buffer, shares
// it with the queue, and charges it to the Bound); the pipeline and log import consume them.
// Neither side depends on the other: the pipeline never imports the tee.
package captured
