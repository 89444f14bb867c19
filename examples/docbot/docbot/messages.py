"""Every reply text of the contract, verbatim (docs/DOCBOT_CONTRACT.md, "Replies")."""

EXAMPLE = "summarize https://example.org/paper.pdf for linkedin"

WELCOME = ("Hi! I'm DocBot. Send me a link to a document (PDF, HTML or plain text) and a "
           f"platform, for example: {EXAMPLE}. I will reply with a summary and send a post "
           "for that platform to WhatsApp.")
HELP = ("How to use DocBot: send 'summarize <link> for <platform>'. Platforms: twitter, "
        "linkedin, facebook, instagram, whatsapp. Supported documents: PDF, HTML and plain "
        "text. Send 'stop' to cancel a running task.")
EMPTY = f"Your message is empty. Send me a link to a document and a platform, for example: {EXAMPLE}."
NO_URL = ("I need a link to a document to work with. Send me a link and a platform, for "
          f"example: {EXAMPLE}.")
GIBBERISH = ("Sorry, I couldn't understand that message. Send me a link to a document and a "
             f"platform, for example: {EXAMPLE}.")
NOT_ENGLISH = "Sorry, I can only work in English for now. Please write your request in English."
TOO_LONG = ("Your message is too long ({words} words; the limit is {limit}). Please send a link "
            "to the document instead of pasting its text.")
INVALID_URL = ("That link looks invalid: {url}. Please send a full link starting with http:// "
               "or https://.")
UNSUPPORTED_SCHEME = "That link looks invalid: {url}. Only http:// and https:// links are supported."
UNSUPPORTED_TYPE = "Sorry, I can't read {kind} files. I can read PDF, HTML and plain text documents."
FETCH_FAILED = ("I couldn't download the document at {url} ({reason}). Please check that the "
                "link works and try again.")
EMPTY_DOCUMENT = "The document at {url} has no readable text."
NON_TEXT = "I can only read text messages. Send me a link to a document and a platform."
UPLOAD = "Please send me a link to the document instead of uploading the file."
ASK_PLATFORM = ("Which platform should the post be for? twitter, linkedin, facebook, instagram "
                "or whatsapp?")
DONE = "Summary of {title}:\n{summary}\n\nYour {Platform} post was sent to WhatsApp."
CANCELLED = "Cancelled. Nothing more will be sent."
NOTHING_TO_CANCEL = "There is nothing to cancel."
# Not in the original list; added to the contract: the LLM endpoint failed or timed out.
LLM_FAILED = "Sorry, I couldn't write the summary right now. Please try again later."
# Questions about a document (contract: "Instructions and questions").
ANSWER = "The document says: {answer}"
NO_ANSWER = "The document doesn't say. I couldn't find an answer to that question in it."
