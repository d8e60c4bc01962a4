package acp

import (
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// promptInput maps a prompt's content blocks to the engine's prompt: text
// as written, images as images, a resource link as a mention of it, and
// an embedded resource as a mention plus its text, appended after the
// prompt in a <context> block.
func promptInput(blocks []sdk.ContentBlock) (string, []engine.ContentBlock, error) {
	var b strings.Builder
	var context []string
	var images []engine.ContentBlock
	for i, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.Image != nil:
			images = append(images, engine.ContentBlock{Type: engine.BlockImage, Data: c.Image.Data, MimeType: c.Image.MimeType})
		case c.ResourceLink != nil:
			b.WriteString(mention(c.ResourceLink.Name, c.ResourceLink.Uri))
		case c.Resource != nil:
			r := c.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				t := r.TextResourceContents
				b.WriteString(mention(nameOf(t.Uri), t.Uri))
				context = append(context, fmt.Sprintf("<context ref=%q>\n%s\n</context>", t.Uri, t.Text))
			case r.BlobResourceContents != nil:
				bl := r.BlobResourceContents
				mime := ""
				if bl.MimeType != nil {
					mime = *bl.MimeType
				}
				if strings.HasPrefix(mime, "image/") {
					images = append(images, engine.ContentBlock{Type: engine.BlockImage, Data: bl.Blob, MimeType: mime})
					continue
				}
				b.WriteString(mention(nameOf(bl.Uri), bl.Uri))
				context = append(context, fmt.Sprintf("<context ref=%q>\n[binary content (%s) not shown]\n</context>", bl.Uri, orUnknown(mime)))
			default:
				return "", nil, fmt.Errorf("prompt[%d]: an empty resource", i)
			}
		case c.Audio != nil:
			return "", nil, fmt.Errorf("prompt[%d]: audio is not supported (promptCapabilities.audio is false)", i)
		default:
			return "", nil, fmt.Errorf("prompt[%d]: an unknown content block", i)
		}
	}
	text := b.String()
	if len(context) > 0 {
		text += "\n\n" + strings.Join(context, "\n\n")
	}
	if text == "" && len(images) == 0 {
		return "", nil, errors.New("the prompt is empty")
	}
	return text, images, nil
}

// mention is how a linked resource reads in the prompt: a Markdown link.
func mention(name, uri string) string {
	if name == "" {
		name = nameOf(uri)
	}
	return fmt.Sprintf("[@%s](%s)", name, uri)
}

func nameOf(uri string) string {
	if i := strings.LastIndexByte(uri, '/'); i >= 0 && i+1 < len(uri) {
		return uri[i+1:]
	}
	return uri
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
