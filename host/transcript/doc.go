// Package transcript builds the view of an ASR stream that people read.
// Each record is decoded once, by its type's entry in one table
// (recordTypes: a decoder into an Item and a fold into the view), by the
// Reader. Build folds the records into the conversation with chunks
// already assembled, tool calls as one item that merges their results,
// file changes and terminals, permissions and questions with their
// answers, plans, state, usage, subagents and declared losses — each item
// with the records it came from and their wire frames. Revisions (ASR-706)
// update the item in place. acptap ui and acptap export render the folded
// view (RenderHTML, RenderMarkdown, the viewer's script); acptap show and
// the demo render the records one by one (package term). It reads a
// stream once, a window of records at a time, so a long session never has
// to fit in memory.
package transcript
