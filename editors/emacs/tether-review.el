;;; tether-review.el --- Review a change before it lands  -*- lexical-binding: t -*-

;; Copyright (C) 2026 tether contributors

;; This file is not part of GNU Emacs.

;;; Commentary:

;; With `tether-review' on, tether shows each tool call's change before
;; applying it (`tether/review' in editors/protocol.md): here, as a
;; buffer in `tether-review-mode', a `diff-mode' of the whole change,
;; one unified diff per file.  The user decides per hunk, per file or
;; for all of it, may edit a file's proposed text first, and may give a
;; reason when rejecting; the answer goes back once everything is
;; decided.  What is accepted is applied by tether as any change is:
;; versioned edits to open buffers, one undo step each, disk for the
;; rest, all or nothing.
;;
;; jsonrpc.el answers a request with what its handler returns, at once,
;; and a review waits for the user.  The handler returns a marker that
;; `jsonrpc-connection-send' (specialized on tether's connection) keeps
;; from being sent, noting the request's id; the answer is sent with
;; that id when the user has decided.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'tether)

(defun tether--set-review (symbol value)
  "Set SYMBOL (`tether-review') to VALUE, and tell every running server."
  (set-default symbol value)
  (when (boundp 'tether--connections)
    (maphash (lambda (_root conn)
               (when (and (eq (tether--state conn) 'ready)
                          (jsonrpc-running-p conn))
                 (jsonrpc-notify
                  conn :workspace/didChangeConfiguration
                  (list :settings
                        (list :tether
                              (list :review (or (tether--review-option)
                                                (list :mode "off"))))))))
             tether--connections)))

(defcustom tether-review 'off
  "Whether tether shows each change for review before applying it.
`off': changes apply at once.  `ask': every tool call's change waits
in a review buffer for your decision.  Or a plist
  (:mode ask :rules RULES :timeout MS)
where RULES is a list of plists such as (:path \"docs/**\" :review
off) or (:tool \"write_file\" :creates t :review off): the first
rule whose :tool, :path (a glob from the project root) and :creates
\(a new file or folder) all match an operation decides for it, and a
tool call is reviewed whole when any of its operations is.  :timeout
is how long a change waits for you (default 300000 ms); nothing is
applied after it.  Set it with `customize' or `setopt' so that
running servers hear of it."
  :type '(choice (const :tag "Apply at once" off)
                 (const :tag "Review every change" ask)
                 (plist :tag "Rules"))
  :set #'tether--set-review
  :group 'tether)

(defcustom tether-review-ediff nil
  "Whether a review opens its files in ediff.
When non-nil, each file of a change with a text to compare opens in
an ediff session of its current text against the proposed one, which
you may change there (`a' copies a current region over a proposed one,
taking that hunk back).  Quitting ediff leaves the proposed text in
its buffer, where \\<tether-review-edit-mode-map>\\[tether-review-edit-done] accepts the file with it.  The diff
buffer stays, and \\<tether-review-mode-map>\\[tether-review-ediff] there opens any file in ediff."
  :type 'boolean
  :group 'tether)

(defface tether-review-accepted '((t :inherit success))
  "How an accepted hunk or file is marked in a review."
  :group 'tether)

(defface tether-review-rejected '((t :inherit error))
  "How a rejected hunk or file is marked in a review."
  :group 'tether)

(defun tether--review-word (value)
  "VALUE (`off', `ask', a string) as the protocol's word."
  (if (stringp value) value (symbol-name value)))

(defun tether--review-option ()
  "The `review' initialization option for `tether-review', or nil when off."
  (pcase tether-review
    ('off nil)
    ('ask (list :mode "ask"))
    ((pred consp)
     (append
      (list :mode (tether--review-word (or (plist-get tether-review :mode) 'off)))
      (when-let ((rules (plist-get tether-review :rules)))
        (list :rules
              (vconcat
               (mapcar (lambda (rule)
                         (append
                          (when-let ((tool (plist-get rule :tool))) (list :tool tool))
                          (when-let ((path (plist-get rule :path))) (list :path path))
                          (when (plist-member rule :creates)
                            (list :creates (if (plist-get rule :creates) t :json-false)))
                          (list :review (tether--review-word
                                         (or (plist-get rule :review) 'ask)))))
                       rules))))
      (when-let ((timeout (plist-get tether-review :timeout)))
        (list :timeout timeout))))
    (_ nil)))


;;; A proposal and its decisions

(cl-defstruct (tether--hunk (:constructor tether--hunk-make))
  "One hunk of a file's diff: its lines in the old and the proposed text."
  old-start old-count new-start new-count
  decision   ; nil, `accept' or `reject'
  overlay)

(cl-defstruct (tether--rfile (:constructor tether--rfile-make))
  "One file of a proposal."
  spec       ; the proposal's file object (plist)
  hunks      ; for an edit or a creation: its hunks
  decision   ; for a file without text, or one edited: `accept' or `reject'
  text       ; the user's own proposed text, when edited
  overlay)

(cl-defstruct (tether--review (:constructor tether--review-make))
  "A proposal waiting for the user."
  conn id params files buffer (reasons nil) (done nil))

(defvar tether--review-count 0 "Reviews shown in this Emacs, to name their buffers.")

(defvar tether--review-unsent nil
  "The review whose request's answer is to be held back, until its id is known.")

(defvar-local tether--this-review nil "The review a `tether-review-mode' buffer shows.")

(defun tether--review-lines (text)
  "TEXT as a vector of lines, each with its line break (the last maybe without).
A carriage return stays part of its line, as `diff' sees it."
  (let ((lines nil) (start 0) (length (length text)))
    (while (< start length)
      (let ((end (string-search "\n" text start)))
        (push (substring text start (if end (1+ end) length)) lines)
        (setq start (if end (1+ end) length))))
    (vconcat (nreverse lines))))

(defun tether--review-merge (old new hunks)
  "The text OLD becomes when only the accepted HUNKS of OLD to NEW are taken.
Every other line is OLD's, line breaks included."
  (let ((o (tether--review-lines old))
        (n (tether--review-lines new))
        (pos 0)
        (parts nil))
    (dolist (h hunks)
      (let* ((count (tether--hunk-old-count h))
             (start (if (zerop count) (tether--hunk-old-start h)
                      (1- (tether--hunk-old-start h))))
             (ncount (tether--hunk-new-count h))
             (nstart (if (zerop ncount) (tether--hunk-new-start h)
                       (1- (tether--hunk-new-start h)))))
        (push (seq-subseq o pos start) parts)
        (push (if (eq (tether--hunk-decision h) 'accept)
                  (seq-subseq n nstart (+ nstart ncount))
                (seq-subseq o start (+ start count)))
              parts)
        (setq pos (+ start count))))
    (push (seq-subseq o pos) parts)
    (apply #'concat (apply #'append (mapcar (lambda (v) (append v nil))
                                            (nreverse parts))))))

(defun tether--review-has-text (spec)
  "Whether file SPEC of a proposal has a text to show: an edit or a creation."
  (and (member (plist-get spec :kind) '("edit" "create"))
       (stringp (plist-get spec :newText))))

(defun tether--review-diff (spec)
  "The unified diff of file SPEC (from `diff'), or nil when its texts agree."
  (let* ((path (plist-get spec :path))
         (old (or (plist-get spec :oldText) ""))
         (new (plist-get spec :newText))
         (old-file (make-temp-file "tether-review-old"))
         (new-file (make-temp-file "tether-review-new")))
    (unwind-protect
        (let ((coding-system-for-write 'utf-8-unix)
              (coding-system-for-read 'utf-8-unix))
          (write-region old nil old-file nil 'silent)
          (write-region new nil new-file nil 'silent)
          (with-temp-buffer
            (let ((status (call-process
                           diff-command nil t nil "-u"
                           "--label" (if (equal (plist-get spec :kind) "create")
                                         "/dev/null" (concat "a/" path))
                           "--label" (concat "b/" path)
                           old-file new-file)))
              (unless (memq status '(0 1))
                (error "tether: %s failed (%s): %s" diff-command status
                       (buffer-string)))
              (and (eq status 1) (buffer-string)))))
      (delete-file old-file)
      (delete-file new-file))))

(defun tether--review-describe (spec)
  "File SPEC of a proposal in words."
  (let ((path (plist-get spec :path)))
    (pcase (plist-get spec :kind)
      ("create" (format "new %s" path))
      ("delete" (format "delete %s%s" path
                        (if (eq (plist-get spec :recursive) t) "/" "")))
      ("rename" (format "%s -> %s" path (or (plist-get spec :newPath)
                                            (plist-get spec :newUri))))
      ("mkdir" (format "new folder %s" path))
      (_ path))))

(defun tether--review-title (params)
  "The first lines of a review of PARAMS: who wants what, then the tool's summary."
  (concat
   (format "%s (%s) wants to change %s."
           (if (equal (plist-get params :caller) "assistant") "An assistant"
             "A tool call")
           (plist-get params :tool)
           (mapconcat #'tether--review-describe (plist-get params :files) ", "))
   (if-let ((summary (plist-get params :summary)))
       (concat "\n" (mapconcat (lambda (line) (concat "  " line))
                               (split-string (string-trim-right summary) "\n")
                               "\n"))
     "")))


;;; The review buffer

(defvar tether-review-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'tether-review-accept-hunk)
    (define-key map "r" #'tether-review-reject-hunk)
    (define-key map "A" #'tether-review-accept-file)
    (define-key map "R" #'tether-review-reject-file)
    (define-key map "e" #'tether-review-edit)
    (define-key map "E" #'tether-review-ediff)
    (define-key map (kbd "C-c C-c") #'tether-review-accept-rest)
    (define-key map (kbd "C-c C-k") #'tether-review-reject-rest)
    map)
  "Keys of a review buffer, beside `diff-mode''s (n/p hunks, N/P files).")

(define-derived-mode tether-review-mode diff-mode "tether review"
  "A change tether waits to apply until you decide.
\\<tether-review-mode-map>\\[tether-review-accept-hunk] accepts the hunk at point and
\\[tether-review-reject-hunk] rejects it; \\[tether-review-accept-file] and \\[tether-review-reject-file] do so for its
whole file; \\[tether-review-edit] edits the file's proposed text;
\\[tether-review-accept-rest] accepts and \\[tether-review-reject-rest] rejects everything not
yet decided.  A rejection asks for a reason (the assistant reads
it; empty is fine).  The answer goes once everything is decided.

\\{tether-review-mode-map}"
  (setq buffer-read-only t)
  ;; diff-mode gives a read-only buffer its one-letter keys through
  ;; `minor-mode-overriding-map-alist', ahead of the major mode's map:
  ;; ours go first there too.
  (setq-local minor-mode-overriding-map-alist
              (cons (cons 'buffer-read-only
                          (make-composed-keymap (list tether-review-mode-map)
                                                diff-mode-shared-map))
                    (seq-remove (lambda (e) (eq (car e) 'buffer-read-only))
                                minor-mode-overriding-map-alist)))
  (add-hook 'kill-buffer-hook #'tether--review-killed nil t))

(defun tether--review-insert-file (file)
  "Insert FILE (a `tether--rfile') of the review in the current buffer."
  (let* ((spec (tether--rfile-spec file))
         (start (point)))
    (if (not (tether--review-has-text spec))
        (progn
          (insert (format "--- %s\n" (tether--review-describe spec)))
          (setf (tether--rfile-overlay file)
                (make-overlay start (1- (point)) nil t nil)))
      (let ((diff (tether--review-diff spec)))
        (if (null diff)
            (insert (format "--- a/%s\n+++ b/%s\n(no change in the text)\n"
                            (plist-get spec :path) (plist-get spec :path)))
          (insert diff)
          (unless (bolp) (insert "\n"))))
      (setf (tether--rfile-overlay file)
            (make-overlay start (save-excursion (goto-char start) (line-end-position))
                          nil t nil))
      (save-excursion
        (goto-char start)
        (let ((hunks nil))
          (while (re-search-forward
                  "^@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? \\+\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? @@"
                  nil t)
            (let ((num (lambda (i) (if (match-string i)
                                       (string-to-number (match-string i)) 1))))
              (push (tether--hunk-make
                     :old-start (funcall num 1) :old-count (funcall num 2)
                     :new-start (funcall num 3) :new-count (funcall num 4)
                     :overlay (make-overlay (match-beginning 0) (match-end 0)))
                    hunks)))
          (setf (tether--rfile-hunks file) (nreverse hunks)))))
    (put-text-property start (point) 'tether-review-file file)))

(defun tether--review-show (review)
  "Fill REVIEW's buffer and show it."
  (with-current-buffer (tether--review-buffer review)
    (let ((inhibit-read-only t))
      (erase-buffer)
      (tether-review-mode)
      (setq tether--this-review review)
      (insert (format "tether review: %s\n" (tether--review-title
                                              (tether--review-params review)))
              (substitute-command-keys
               "\\<tether-review-mode-map>\\[tether-review-accept-hunk]/\\[tether-review-reject-hunk] \
accept/reject the hunk, \\[tether-review-accept-file]/\\[tether-review-reject-file] the file, \
\\[tether-review-edit] edit the proposed text (\\[tether-review-ediff] in ediff), \\[tether-review-accept-rest]/\\[tether-review-reject-rest] \
everything left; n/p hunks, N/P files\n\n"))
      (dolist (file (tether--review-files review))
        (tether--review-insert-file file))
      (goto-char (point-min))
      (tether--review-goto-undecided))
    (pop-to-buffer (current-buffer))
    (when tether-review-ediff
      (tether--review-ediff-next review))))

(defun tether--review-label (overlay decision)
  "Mark OVERLAY's line with DECISION."
  (when overlay
    (overlay-put overlay 'after-string
                 (pcase decision
                   ('accept (propertize "  [accepted]" 'face 'tether-review-accepted))
                   ('reject (propertize "  [rejected]" 'face 'tether-review-rejected))
                   (_ nil)))))

(defun tether--review-items (review)
  "Every decision REVIEW waits for, in order: hunks, and files without hunks."
  (cl-loop for file in (tether--review-files review)
           append (if (and (tether--rfile-hunks file)
                           (null (tether--rfile-decision file)))
                      (tether--rfile-hunks file)
                    (list file))))

(defun tether--item-decision (item)
  "ITEM's decision (a hunk or a file)."
  (if (tether--hunk-p item) (tether--hunk-decision item) (tether--rfile-decision item)))

(defun tether--item-start (item)
  "Where ITEM is shown."
  (overlay-start (if (tether--hunk-p item) (tether--hunk-overlay item)
                   (tether--rfile-overlay item))))

(defun tether--review-goto-undecided ()
  "Move to the first item after point still undecided, else the first one."
  (let* ((items (seq-remove #'tether--item-decision
                            (tether--review-items tether--this-review)))
         (next (or (seq-find (lambda (i) (> (tether--item-start i) (point))) items)
                   (car items))))
    (when next
      (goto-char (tether--item-start next)))))

(defun tether--review-here ()
  "The review of the current buffer, or an error."
  (or (and tether--this-review (not (tether--review-done tether--this-review))
           tether--this-review)
      (user-error "tether: this buffer shows no change waiting for review")))

(defun tether--review-file-at-point ()
  "The file of the review at point."
  (or (get-text-property (point) 'tether-review-file)
      (get-text-property (max (point-min) (1- (point))) 'tether-review-file)
      (user-error "tether: point is on no file of the change")))

(defun tether--review-hunk-at-point (file)
  "The hunk of FILE at point, or the file itself when it has no hunks."
  (let ((hunks (tether--rfile-hunks file)))
    (if (or (null hunks) (tether--rfile-decision file))
        file
      (or (car (last (seq-filter (lambda (h) (<= (tether--item-start h) (point)))
                                 hunks)))
          (car hunks)))))

(defun tether--review-reason (what)
  "Ask why WHAT is rejected; nil for no reason."
  (let ((reason (string-trim (read-string (format "Reject %s, reason (optional): " what)))))
    (unless (string-empty-p reason) reason)))

(defun tether--review-decide (review items decision &optional reason)
  "Record DECISION for ITEMS of REVIEW, then answer if nothing is left."
  (when reason (push reason (tether--review-reasons review)))
  (dolist (item items)
    (unless (tether--item-decision item)
      (if (tether--hunk-p item)
          (progn (setf (tether--hunk-decision item) decision)
                 (tether--review-label (tether--hunk-overlay item) decision))
        (setf (tether--rfile-decision item) decision)
        (tether--review-label (tether--rfile-overlay item) decision))))
  (if (seq-every-p #'tether--item-decision (tether--review-items review))
      (tether--review-answer review (tether--review-result review))
    (tether--review-goto-undecided)))

(defun tether-review-accept-hunk ()
  "Accept the hunk at point (for a file without hunks, the file)."
  (interactive)
  (let ((review (tether--review-here)))
    (tether--review-decide review (list (tether--review-hunk-at-point
                                         (tether--review-file-at-point)))
                           'accept)))

(defun tether-review-reject-hunk ()
  "Reject the hunk at point (for a file without hunks, the file), asking why."
  (interactive)
  (let* ((review (tether--review-here))
         (file (tether--review-file-at-point))
         (item (tether--review-hunk-at-point file)))
    (tether--review-decide review (list item) 'reject
                           (tether--review-reason
                            (format "this hunk of %s"
                                    (plist-get (tether--rfile-spec file) :path))))))

(defun tether--review-file-items (file)
  "The undecided items of FILE."
  (if (and (tether--rfile-hunks file) (null (tether--rfile-decision file)))
      (tether--rfile-hunks file)
    (list file)))

(defun tether-review-accept-file ()
  "Accept what is undecided in the file at point."
  (interactive)
  (let ((review (tether--review-here)))
    (tether--review-decide review (tether--review-file-items (tether--review-file-at-point))
                           'accept)))

(defun tether-review-reject-file ()
  "Reject what is undecided in the file at point, asking why."
  (interactive)
  (let* ((review (tether--review-here))
         (file (tether--review-file-at-point)))
    (tether--review-decide review (tether--review-file-items file) 'reject
                           (tether--review-reason
                            (tether--review-describe (tether--rfile-spec file))))))

(defun tether-review-accept-rest ()
  "Accept everything of the change not yet decided."
  (interactive)
  (let ((review (tether--review-here)))
    (tether--review-decide review (tether--review-items review) 'accept)))

(defun tether-review-reject-rest ()
  "Reject everything of the change not yet decided, asking why."
  (interactive)
  (let ((review (tether--review-here)))
    (tether--review-decide review (tether--review-items review) 'reject
                           (tether--review-reason "the rest of the change"))))


;;; Editing a proposed text

(defvar-local tether--editing nil
  "In a buffer editing a proposed text: (REVIEW . FILE).")

(defvar tether-review-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'tether-review-edit-done)
    (define-key map (kbd "C-c C-k") #'tether-review-edit-abort)
    map)
  "Keys of a buffer editing a proposed text.")

(define-minor-mode tether-review-edit-mode
  "Editing the text a change proposes for a file.
\\<tether-review-edit-mode-map>\\[tether-review-edit-done] accepts the file with this text;
\\[tether-review-edit-abort] goes back to the review without it."
  :lighter " tether-edit")

(defun tether--review-text-buffer (name text &optional mode-file)
  "A new buffer called NAME holding TEXT raw, in the major mode of MODE-FILE."
  (let ((buffer (generate-new-buffer name)))
    (with-current-buffer buffer
      ;; Raw: a carriage return stays where it is (shown as ^M).
      (insert text)
      (when mode-file
        (let ((buffer-file-name mode-file))
          (ignore-errors (set-auto-mode))))
      (goto-char (point-min))
      (set-buffer-modified-p nil))
    buffer))

(defun tether--review-editable (review file)
  "Check that REVIEW's FILE can be edited whole; return its spec."
  (let ((spec (tether--rfile-spec file)))
    (when (tether--review-done review)
      (user-error "tether: the review has ended"))
    (unless (tether--review-has-text spec)
      (user-error "tether: %s has no text to edit" (tether--review-describe spec)))
    (when (or (tether--rfile-decision file)
              (seq-find #'tether--item-decision (tether--review-file-items file)))
      (user-error "tether: %s is already partly decided" (plist-get spec :path)))
    spec))

(defun tether--review-proposal-buffer (review file)
  "A buffer editing the text REVIEW proposes for FILE.
It is in `tether-review-edit-mode'."
  (let* ((spec (tether--rfile-spec file))
         (buffer (tether--review-text-buffer
                  (format "*tether proposal %s*" (plist-get spec :path))
                  (plist-get spec :newText) (plist-get spec :path))))
    (with-current-buffer buffer
      (setq tether--editing (cons review file))
      (tether-review-edit-mode 1)
      (setq header-line-format
            (substitute-command-keys
             "\\<tether-review-edit-mode-map>Proposed text: \\[tether-review-edit-done] accept it, \\[tether-review-edit-abort] go back")))
    buffer))

(defun tether-review-edit ()
  "Edit the text proposed for the file at point; accepting it decides the file."
  (interactive)
  (let ((review (tether--review-here))
        (file (tether--review-file-at-point)))
    (tether--review-editable review file)
    (pop-to-buffer (tether--review-proposal-buffer review file))))

(defun tether-review-ediff ()
  "Compare the file at point with its proposed text in ediff, and edit that.
Quitting ediff leaves the proposed text in its buffer: accept it there."
  (interactive)
  (tether--review-ediff (tether--review-here) (tether--review-file-at-point)))

(defun tether--review-ediff (review file)
  "Open REVIEW's FILE in ediff: its current text against the proposed one."
  (let* ((spec (tether--review-editable review file))
         (path (plist-get spec :path))
         (old (tether--review-text-buffer (format "*tether current %s*" path)
                                          (or (plist-get spec :oldText) "") path))
         (new (tether--review-proposal-buffer review file)))
    (with-current-buffer old (setq buffer-read-only t))
    (ediff-buffers old new
                   (list (lambda ()
                           (add-hook 'ediff-quit-hook
                                     (lambda () (tether--review-ediff-quit old new))
                                     t t))))))

(defun tether--review-ediff-quit (old new)
  "After ediff of OLD and NEW: show NEW, the proposed text, to accept or not."
  (when (buffer-live-p old) (kill-buffer old))
  (when (buffer-live-p new)
    (delete-other-windows)
    (switch-to-buffer new)
    (message "%s" (substitute-command-keys
                   "\\<tether-review-edit-mode-map>tether: \\[tether-review-edit-done] accepts the file with this text, \\[tether-review-edit-abort] goes back to the review"))))

(defun tether--review-ediff-next (review)
  "Open in ediff the next file of REVIEW that has a text and no decision."
  (when-let ((file (seq-find (lambda (f)
                               (and (tether--review-has-text (tether--rfile-spec f))
                                    (null (tether--rfile-decision f))
                                    (not (seq-find #'tether--item-decision
                                                   (tether--review-file-items f)))))
                             (tether--review-files review))))
    (tether--review-ediff review file)))

(defun tether-review-edit-done ()
  "Accept the file with the text of this buffer."
  (interactive)
  (pcase-let ((`(,review . ,file) (or tether--editing (user-error "Not editing a proposal"))))
    (let ((text (buffer-substring-no-properties (point-min) (point-max))))
      (quit-window t)
      (when (tether--review-done review)
        (user-error "tether: the review has ended"))
      (unless (equal text (plist-get (tether--rfile-spec file) :newText))
        (setf (tether--rfile-text file) text))
      (with-current-buffer (tether--review-buffer review)
        (tether--review-decide review (list file) 'accept))
      (when (and tether-review-ediff (not (tether--review-done review)))
        (tether--review-ediff-next review)))))

(defun tether-review-edit-abort ()
  "Go back to the review without this text."
  (interactive)
  (quit-window t))


;;; The answer

(defun tether--review-result (review)
  "REVIEW's answer from its decisions, in `tether/review''s result shape.
A file of mixed hunks is accepted with the text its accepted hunks
make; the user's own text wins; every file accepted unchanged is a
plain `accept', every file rejected a `reject'."
  (let* ((files
          (mapcar
           (lambda (file)
             (let* ((spec (tether--rfile-spec file))
                    (uri (plist-get spec :uri))
                    (hunks (tether--rfile-hunks file)))
               (cond
                ((tether--rfile-text file)
                 (list :uri uri :decision "accept" :text (tether--rfile-text file)))
                ((tether--rfile-decision file)
                 (list :uri uri :decision (symbol-name (tether--rfile-decision file))))
                ((seq-every-p (lambda (h) (eq (tether--hunk-decision h) 'accept)) hunks)
                 (list :uri uri :decision "accept"))
                ((seq-every-p (lambda (h) (eq (tether--hunk-decision h) 'reject)) hunks)
                 (list :uri uri :decision "reject"))
                (t (list :uri uri :decision "accept"
                         :text (tether--review-merge (or (plist-get spec :oldText) "")
                                                     (plist-get spec :newText) hunks))))))
           (tether--review-files review)))
         (reason (string-join (reverse (tether--review-reasons review)) "; "))
         (why (unless (string-empty-p reason) (list :reason reason))))
    (cond
     ((seq-every-p (lambda (f) (equal (plist-get f :decision) "reject")) files)
      (append (list :decision "reject") why))
     ((seq-every-p (lambda (f) (equal (plist-get f :decision) "accept")) files)
      (append (list :decision "accept") why
              (when (seq-find (lambda (f) (plist-get f :text)) files)
                (list :files (vconcat files)))))
     (t (append (list :decision "partial") why (list :files (vconcat files)))))))

(defun tether--review-answer (review answer)
  "Send ANSWER to REVIEW's request, once, and close its buffer."
  (unless (tether--review-done review)
    (setf (tether--review-done review) t)
    (let ((conn (tether--review-conn review)))
      (when (and (tether--review-id review) (jsonrpc-running-p conn))
        (jsonrpc-connection-send conn :id (tether--review-id review) :result answer)))
    (message "tether: change %s" (pcase (plist-get answer :decision)
                                   ("accept" "accepted")
                                   ("reject" "rejected")
                                   (_ "partly accepted")))
    (tether--review-close review)))

(defun tether--review-close (review)
  "Close REVIEW's buffer and its window."
  (let ((buffer (tether--review-buffer review)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (remove-hook 'kill-buffer-hook #'tether--review-killed t))
      (quit-window t (get-buffer-window buffer))
      (when (buffer-live-p buffer) (kill-buffer buffer)))))

(defun tether--review-withdraw (conn params)
  "Take down CONN's review of the request PARAMS name (`$/cancelRequest').
The server stopped waiting for it (its timeout passed, or the call was
cancelled) and applies nothing; an answer would change nothing."
  (let ((id (plist-get params :id)))
    (dolist (buffer (buffer-list))
      (let ((review (buffer-local-value 'tether--this-review buffer)))
        (when (and review id (not (tether--review-done review))
                   (eq (tether--review-conn review) conn)
                   (equal (tether--review-id review) id))
          (setf (tether--review-done review) t)
          (tether--review-close review)
          (message "tether: %s stopped waiting for your review; nothing was applied"
                   (or (plist-get (tether--review-params review) :tool) "the tool")))))))

(defun tether--review-killed ()
  "A review buffer killed before everything was decided rejects the rest."
  (when-let ((review tether--this-review))
    (unless (tether--review-done review)
      (dolist (item (tether--review-items review))
        (unless (tether--item-decision item)
          (if (tether--hunk-p item) (setf (tether--hunk-decision item) 'reject)
            (setf (tether--rfile-decision item) 'reject))))
      (push "the review was closed" (tether--review-reasons review))
      (tether--review-answer review (tether--review-result review)))))

(defun tether--review-request (conn params)
  "Handle `tether/review' PARAMS on CONN: show it; the answer goes later."
  (let* ((review (tether--review-make
                  :conn conn :params params
                  :buffer (generate-new-buffer
                           (format "*tether review %d*" (cl-incf tether--review-count)))))
         (files (mapcar (lambda (spec) (tether--rfile-make :spec spec))
                        (plist-get params :files))))
    (setf (tether--review-files review) files)
    (tether--review-show review)
    (setq tether--review-unsent review)
    'tether--review-later))

(cl-defmethod jsonrpc-connection-send :around
  ((_conn tether--connection) &rest args &key id result &allow-other-keys)
  "Hold back the answer to a review until the user has decided.
ARGS are the message's; ID and RESULT its id and result."
  (if (and id (eq result 'tether--review-later))
      (when tether--review-unsent
        (setf (tether--review-id tether--review-unsent) id)
        (setq tether--review-unsent nil))
    (ignore args)
    (cl-call-next-method)))

(provide 'tether-review)
;;; tether-review.el ends here
