;;; tether.el --- AI assistants on your unsaved buffers  -*- lexical-binding: t -*-

;; Copyright (C) 2026 tether contributors

;; Author: tether contributors
;; URL: https://github.com/tether-dev/tether
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience, processes

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `tether-mode' runs `tether lsp' once per project (project.el's
;; root), beside whatever language server you use, on Emacs's own
;; jsonrpc.el rather than through eglot (which allows one server per
;; major mode).  It keeps every file buffer of the project in step with
;; tether, each change sent the moment it is made, so that an assistant
;; attached through `tether mcp' reads and searches your unsaved text,
;; and its edits land in your buffers: versioned, all or nothing, one
;; undo step each, and saved only when the buffer was clean.
;;
;; Commands: `tether-call' (run any tool), `tether-grep' (search
;; through tether, results in a `grep-mode' buffer), `tether-status',
;; `tether-restart'.
;;
;; An edit from tether (`workspace/applyEdit') is checked whole before
;; any buffer is touched: every document's version must be its buffer's
;; current version and every range must lie in the buffer, else nothing
;; is applied and tether is told why (it reads the buffer again and
;; retries).  An edit for a file no buffer here has open is refused,
;; never written behind Emacs's back: tether then changes the file on
;; disk itself, as it does for every file no editor has open.
;;
;; See README.md beside this file, and editors/protocol.md in tether's
;; repository for the protocol.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'seq)
(require 'subr-x)
(require 'url-util)

(declare-function grep-mode "grep")

;; What Emacs knows (diagnostics, the view, the language servers'
;; answers) is in a file of its own, loaded with `tether-mode'.
(autoload 'tether--editor-context "tether-knowledge")
(autoload 'tether--language-request "tether-knowledge")
(autoload 'tether--send-all-diagnostics "tether-knowledge")
;; Review before apply, in a file of its own too.
(autoload 'tether--review-request "tether-review")
(autoload 'tether--review-option "tether-review")
(autoload 'tether--review-withdraw "tether-review")
;; And the journal's history.
(autoload 'tether-history "tether-history" nil t)
(autoload 'tether-undo "tether-history" nil t)

(defconst tether-version "0.1.0"
  "This package's version: the version of the tether binary it is made for.")

(defconst tether-protocol-version 3
  "The tether protocol version this package speaks (see editors/protocol.md).")

(defconst tether-min-server-protocol 1
  "The oldest tether protocol version of a server this package works with.")

(defgroup tether nil
  "Let AI assistants work on your unsaved buffers through tether."
  :group 'tools
  :prefix "tether-")

(defcustom tether-executable "tether"
  "The tether binary: a name looked up in variable `exec-path', or a file."
  :type 'string)

(defcustom tether-lsp-arguments nil
  "Extra arguments for `tether lsp'.
For example (\"--profile\" \"coder\") or (\"--read-only\")."
  :type '(repeat string))

(defcustom tether-events-buffer-size 0
  "How many characters of JSON-RPC log each connection keeps.
0 keeps none, nil all.  The log is the \"*tether ROOT events*\"
buffer; raise this to see the traffic when debugging."
  :type '(choice (const :tag "No limit" nil) integer))

(defcustom tether-initialization-options nil
  "The `initializationOptions' sent to `tether lsp', as a plist.
For example (:save \"never\") keeps tether from saving the buffers
it edits."
  :type 'plist)


;;; State

(defclass tether--connection (jsonrpc-process-connection)
  ((root :initarg :root :reader tether--root
         :documentation "The project root served, a directory name.")
   (state :initform 'starting :accessor tether--state
          :documentation "`starting', `ready' or `exited'.")
   (encoding :initform 'utf-16 :accessor tether--encoding
             :documentation "`utf-8', `utf-16' or `utf-32'.")
   (protocol :initform 0 :accessor tether--protocol
             :documentation "The server's tether protocol version.")
   (docs :initform (make-hash-table :test #'equal) :reader tether--docs
         :documentation "The open documents: URI to buffer.")
   (stopping :initform nil :accessor tether--stopping
             :documentation "Non-nil once we asked the server to exit."))
  :documentation "A connection to one `tether lsp', serving one root.")

(defvar tether--connections (make-hash-table :test #'equal)
  "Live connections by project root.")

(defvar tether--exited nil
  "Roots whose server exited on its own; they wait for `tether-restart'.")

;; The buffer-local state of an open document.  All of it survives
;; `kill-all-local-variables' (a change of major mode, `revert-buffer'),
;; which would otherwise cut the buffer off from tether silently.
(defvar-local tether--conn nil
  "The connection this buffer is open on.")
(defvar-local tether--uri nil
  "The URI this buffer was opened under.")
(defvar-local tether--version 0
  "The version of this buffer as last sent to tether.")
(defvar-local tether--eol "\n"
  "The file's line break, which the text sent to tether uses.")
(defvar-local tether--before nil
  "Where the pending change is: (BEG END LSP-BEG LSP-END).
Recorded before the change, while the old text is there to measure.")
(defvar-local tether--batch nil
  "While an edit from tether is applied: (batch . CHANGES).
They are sent as one `didChange' once the edit is in.")
(defvar-local tether--ticks nil
  "The versions last sent to tether, newest first: (TICK . VERSION).
TICK is the `buffer-chars-modified-tick' at which the buffer held the
text of VERSION.  A language server's report names the version of
the text it was computed for in that server's count; the tick of
that text gives tether's version of it (see tether-knowledge.el).")
(dolist (var '(tether--conn tether--uri tether--version tether--eol
                            tether--before tether--batch tether--ticks))
  (put var 'permanent-local t))
(put 'tether--before-change 'permanent-local-hook t)
(put 'tether--after-change 'permanent-local-hook t)

(defconst tether--ticks-kept 64
  "How many versions `tether--ticks' and its kin remember.")

(defun tether--remember-tick ()
  "Record that the buffer's text now is `tether--version'."
  (push (cons (buffer-chars-modified-tick) tether--version) tether--ticks)
  (when (> (length tether--ticks) tether--ticks-kept)
    (setcdr (nthcdr (1- tether--ticks-kept) tether--ticks) nil)))

(defvar tether-after-apply-functions nil
  "Functions called in each buffer an edit from tether has changed.
They run once the edit is in, in the buffer, with no argument.")

(defvar tether--in-change nil
  "Non-nil while a change hook of ours runs.
Sending to the server may run process filters, and so an edit.")

(define-error 'tether--refused "tether: edit refused")

(defvar tether-mode)


;;; Positions
;;
;; LSP positions are a line and a column in the unit the server picked.
;; Emacs lines are LSP lines: the text tether sees has the file's line
;; break where Emacs has a newline.  In `utf-8' a column counts bytes,
;; which `position-bytes' gives directly (Emacs keeps text as UTF-8); in
;; `utf-16' a character beyond the Basic Multilingual Plane counts twice.

(defun tether--column (bol pos &optional encoding)
  "The LSP column of POS on the line starting at BOL.
ENCODING (`utf-8', `utf-16' or `utf-32') defaults to the connection's."
  (pcase (or encoding (tether--encoding tether--conn))
    ('utf-8 (- (position-bytes pos) (position-bytes bol)))
    ('utf-32 (- pos bol))
    (_ (save-excursion
         (goto-char bol)
         (let ((astral 0))
           (while (re-search-forward "[\U00010000-\U0010FFFF]" pos t)
             (cl-incf astral))
           (+ (- pos bol) astral))))))

(defun tether--position (pos &optional encoding)
  "The LSP position of buffer position POS, in ENCODING's unit.
ENCODING defaults to the connection's."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t))
            :character (tether--column (line-beginning-position) pos
                                       encoding)))))

(defun tether--point (position &optional encoding)
  "The buffer position of LSP POSITION, or nil when there is none.
A line past the end, a column past the end of its line or inside a
character are not in the buffer: the edit was made for other text,
and guessing would put it in the wrong place.  ENCODING, the unit of
its column, defaults to the connection's."
  (let ((line (plist-get position :line))
        (column (plist-get position :character)))
    (when (and (natnump line) (natnump column))
      (save-excursion
        (save-restriction
          (widen)
          (goto-char (point-min))
          (when (and (zerop (forward-line line)) (bolp))
            (let ((bol (point))
                  (eol (line-end-position)))
              (pcase (or encoding (tether--encoding tether--conn))
                ('utf-8
                 (let ((target (+ (position-bytes bol) column)))
                   (when (<= target (position-bytes eol))
                     (let ((pos (byte-to-position target)))
                       (and pos (= (position-bytes pos) target) pos)))))
                ('utf-32 (and (<= (+ bol column) eol) (+ bol column)))
                (_ (let ((pos bol) (units 0))
                     (while (and (< units column) (< pos eol))
                       (cl-incf units (if (> (char-after pos) #xFFFF) 2 1))
                       (cl-incf pos))
                     (and (= units column) pos)))))))))))

(defun tether--text (beg end)
  "The text from BEG to END as tether sees it: with the file's breaks."
  (let ((text (buffer-substring-no-properties beg end)))
    (if (equal tether--eol "\n")
        text
      (string-replace "\n" tether--eol text))))

(defun tether--from-server (text)
  "Return TEXT from tether in the buffer's form: breaks as newlines."
  (if (equal tether--eol "\n")
      text
    (string-replace tether--eol "\n" text)))

(defun tether--eol-of-buffer ()
  "The visited file's line break, from the coding system that read it."
  (pcase (coding-system-eol-type buffer-file-coding-system)
    (1 "\r\n")
    (2 "\r")
    (_ "\n")))


;;; Document sync

(defun tether--path-to-uri (file)
  "The file: URI of FILE's real path (tether keys documents by it)."
  (let ((allowed (copy-sequence url-path-allowed-chars)))
    (aset allowed ?: nil)
    (concat "file://" (url-hexify-string (file-truename file) allowed))))

(defun tether--uri-to-path (uri)
  "The file name of a file: URI."
  (when (string-prefix-p "file://" uri)
    (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)))

(defun tether--project-root (file)
  "The root of FILE's project as a directory name, or nil."
  (when-let* ((dir (file-name-directory file))
              (project (ignore-errors (project-current nil dir))))
    (file-name-as-directory (expand-file-name (project-root project)))))

(defun tether--language-id ()
  "A languageId for the buffer, from its major mode."
  (string-remove-suffix
   "-mode" (string-remove-suffix "-ts-mode" (symbol-name major-mode))))

(defun tether--notify (method params)
  "Send METHOD with PARAMS to the buffer's server, if it is running."
  (when (and tether--conn (jsonrpc-running-p tether--conn))
    (jsonrpc-notify tether--conn method params)))

(defun tether--open (conn)
  "Open the current buffer on CONN: its whole text, then each change."
  (let ((uri (tether--path-to-uri buffer-file-name)))
    (unless (buffer-live-p (gethash uri (tether--docs conn)))
      (setq tether--conn conn
            tether--uri uri
            tether--version 0
            tether--eol (tether--eol-of-buffer)
            tether--before nil
            tether--batch nil
            tether--ticks nil)
      (tether--remember-tick)
      (puthash uri (current-buffer) (tether--docs conn))
      (add-hook 'before-change-functions #'tether--before-change nil t)
      (add-hook 'after-change-functions #'tether--after-change nil t)
      (save-restriction
        (widen)
        (tether--notify
         :textDocument/didOpen
         (list :textDocument
               (list :uri uri :languageId (tether--language-id) :version 0
                     :text (tether--text (point-min) (point-max)))))))))

(defun tether--forget ()
  "Cut the current buffer off from its connection, telling no one."
  (when (and tether--conn
             (eq (gethash tether--uri (tether--docs tether--conn))
                 (current-buffer)))
    (remhash tether--uri (tether--docs tether--conn)))
  (remove-hook 'before-change-functions #'tether--before-change t)
  (remove-hook 'after-change-functions #'tether--after-change t)
  (setq tether--conn nil tether--uri nil tether--before nil
        tether--batch nil))

(defun tether--close ()
  "Close the current buffer's document: `didClose', then nothing."
  (when tether--conn
    (tether--notify :textDocument/didClose
                    (list :textDocument (list :uri tether--uri)))
    (tether--forget)))

(defun tether--maybe-open (&optional buffer)
  "Open BUFFER (default the current one) on its project's server.
The server is started when the project has none yet."
  (with-current-buffer (or buffer (current-buffer))
    (when (and tether-mode buffer-file-name (not tether--conn)
               (not (file-remote-p buffer-file-name)))
      (when-let ((root (tether--project-root buffer-file-name)))
        (let ((conn (gethash root tether--connections)))
          (cond
           ((and conn (eq (tether--state conn) 'ready)) (tether--open conn))
           ;; Starting: it opens the project's buffers once it is ready.
           (conn nil)
           ((member root tether--exited) nil)
           (t (tether--start root))))))))

(defun tether--before-change (beg end)
  "Record where the change from BEG to END is, in tether's terms."
  (when tether--conn
    ;; Change hooks must leave the match data alone: `replace-match' runs
    ;; them between its search and its use of the match.
    (save-match-data
      (setq tether--before (list beg end (tether--position beg)
                                 (tether--position end))))))

(defun tether--after-change (beg end pre-change-length)
  "Send the change from BEG to END at once.
PRE-CHANGE-LENGTH characters were there before it.  The range sent
is the one recorded before the change.  Some commands announce a
larger region before a change than the one they report after it
\(`capitalize-word'): the change is then sent as the whole region
announced, which holds it.  When the two disagree in another way,
the whole text is sent, so that tether's copy never drifts."
  (when tether--conn
    (save-match-data
      (tether--send-after-change beg end pre-change-length))))

(defun tether--send-after-change (beg end pre-change-length)
  "Send the change from BEG to END, PRE-CHANGE-LENGTH long before it."
  (let* ((tether--in-change t)
         (change
          (pcase tether--before
            (`(,b-beg ,b-end ,lsp-beg ,lsp-end)
             (when (and (<= b-beg beg) (<= (+ beg pre-change-length) b-end))
               (save-restriction
                 (widen)
                 (list :range (list :start lsp-beg :end lsp-end)
                       :text (tether--text
                              b-beg
                              (+ b-end (- end beg pre-change-length))))))))))
    (setq tether--before nil)
    (tether--send-change
     (or change
         (save-restriction
           (widen)
           (list :text (tether--text (point-min) (point-max))))))))

(defun tether--send-change (change)
  "Send CHANGE now, or keep it for the batch of an edit being applied."
  (if tether--batch
      (push change (cdr tether--batch))
    (cl-incf tether--version)
    (tether--remember-tick)
    (tether--notify
     :textDocument/didChange
     (list :textDocument (list :uri tether--uri :version tether--version)
           :contentChanges (vector change)))))

(defun tether--flush-batch ()
  "Send what an applied edit did as one `didChange'."
  (let ((changes (cdr tether--batch)))
    (setq tether--batch nil)
    (when changes
      (cl-incf tether--version)
      (tether--remember-tick)
      (tether--notify
       :textDocument/didChange
       (list :textDocument (list :uri tether--uri :version tether--version)
             :contentChanges (vconcat (nreverse changes)))))))

(defun tether--after-save ()
  "`didSave' for the current buffer."
  (when tether--conn
    (tether--notify :textDocument/didSave
                    (list :textDocument (list :uri tether--uri)))))

(defun tether--after-revert ()
  "Send the whole text after a revert, whatever the hooks saw of it."
  (when tether--conn
    (setq tether--before nil)
    (save-restriction
      (widen)
      (tether--send-change
       (list :text (tether--text (point-min) (point-max)))))))

(defun tether--visited-file-changed ()
  "Close the document under its old name, open it under the new one."
  (tether--close)
  (tether--maybe-open))


;;; Edits from tether

(defun tether--buffer-for-uri (conn uri)
  "The buffer open on CONN under URI, or visiting the same file."
  (or (let ((buffer (gethash uri (tether--docs conn))))
        (and (buffer-live-p buffer) buffer))
      (when-let ((file (tether--uri-to-path uri)))
        (let ((truename (abbreviate-file-name (file-truename file))))
          (seq-find (lambda (buffer)
                      (and (buffer-live-p buffer)
                           (equal (buffer-local-value 'buffer-file-truename
                                                      buffer)
                                  truename)))
                    (hash-table-values (tether--docs conn)))))))

(defun tether--refuse (index format &rest args)
  "Refuse the whole edit, its INDEXth change the culprit.
FORMAT and ARGS say why."
  (signal 'tether--refused (list (apply #'format format args) index)))

(defun tether--plan-document (conn item index plan)
  "Check ITEM, the INDEXth TextDocumentEdit; return (BUFFER . EDITS).
CONN is the connection; PLAN the buffers already planned.  EDITS are
\(BEG END TEXT), sorted, not overlapping."
  (let* ((document (plist-get item :textDocument))
         (uri (plist-get document :uri))
         (version (plist-get document :version))
         (buffer (tether--buffer-for-uri conn uri))
         (name (or (tether--uri-to-path uri) uri)))
    (unless buffer
      (tether--refuse index "%s is not open in Emacs (closed, or changed)"
                      name))
    (when (assq buffer plan)
      (tether--refuse index "%s is named twice in one edit" name))
    (with-current-buffer buffer
      (when (and version (/= version tether--version))
        (tether--refuse
         index "%s: the edit is for version %s, the buffer is at version %s \
\(changed since)" name version tether--version))
      (when buffer-read-only
        (tether--refuse index "%s is read-only in Emacs" name))
      (let ((edits
             (cl-loop
              for e across (plist-get item :edits)
              for range = (plist-get e :range)
              for beg = (tether--point (plist-get range :start))
              for end = (tether--point (plist-get range :end))
              unless (and beg end (<= beg end))
              do (tether--refuse
                  index "%s: the range %S is not in the buffer at version %s \
\(changed since?)" name range tether--version)
              collect (list beg end
                            (tether--from-server (plist-get e :newText))))))
        ;; `sort' is stable: inserts at one place keep their order.
        (setq edits (sort edits (lambda (a b) (< (car a) (car b)))))
        (cl-loop for (a b) on edits while b
                 when (> (nth 1 a) (car b))
                 do (tether--refuse index "%s: the edit's ranges overlap" name))
        (cons buffer edits)))))

(defun tether--plan-edit (conn edit)
  "Check EDIT (a WorkspaceEdit) on CONN; return ((BUFFER . EDITS) ...).
Nothing is touched here: any problem refuses the whole edit."
  (let ((items
         (if-let ((document-changes (plist-get edit :documentChanges)))
             (append document-changes nil)
           (cl-loop for (key edits) on (plist-get edit :changes) by #'cddr
                    collect (list :textDocument
                                  (list :uri (substring (symbol-name key) 1))
                                  :edits edits))))
        (plan nil))
    (cl-loop
     for item in items for index from 0 do
     (when (plist-get item :kind)
       (tether--refuse index "file operations (%s) are not supported here"
                       (plist-get item :kind)))
     (push (tether--plan-document conn item index plan) plan))
    (nreverse plan)))

(defun tether--replace (beg end text)
  "Replace BEG..END with TEXT.
The text goes in first, so that point after the region stays after it."
  (goto-char beg)
  (insert text)
  (when (< beg end)
    (delete-region (+ beg (length text)) (+ end (length text)))))

(defun tether--apply-plan (plan)
  "Apply PLAN from `tether--plan-edit', all or nothing.
Each buffer's edits are one undo step and reach tether as one
`didChange'.  If a buffer fails midway (read-only text), the ones
already changed are put back and the edit is refused."
  (let ((groups nil))
    (condition-case err
        (dolist (entry plan)
          (with-current-buffer (car entry)
            (undo-boundary)
            (let ((group (prepare-change-group)))
              (push (cons (current-buffer) group) groups)
              (activate-change-group group)
              (setq tether--batch (list 'batch))
              (unwind-protect
                  (save-excursion
                    (save-restriction
                      (widen)
                      ;; Last first, so the earlier positions stay true.
                      (dolist (e (reverse (cdr entry)))
                        (apply #'tether--replace e))))
                (tether--flush-batch)))))
      (error
       (dolist (g groups)
         (with-current-buffer (car g)
           (cancel-change-group (cdr g))))
       (tether--refuse nil "applying the edit failed, nothing changed: %s"
                       (error-message-string err))))
    (dolist (g groups)
      (with-current-buffer (car g)
        (undo-amalgamate-change-group (cdr g))
        (accept-change-group (cdr g))
        (undo-boundary)))
    (dolist (g groups)
      (with-current-buffer (car g)
        (with-demoted-errors "tether: after the edit: %S"
          (run-hooks 'tether-after-apply-functions))))
    ;; The boundary after the edit must stay: a key typed next would
    ;; otherwise be amalgamated into the edit's undo step, as
    ;; consecutive self-inserts are into one another.
    (when (boundp 'undo-auto--last-boundary-cause)
      (setq undo-auto--last-boundary-cause 'timer))))

(defun tether--apply-workspace-edit (conn params)
  "Answer `workspace/applyEdit' on CONN: all of PARAMS's edit, or none."
  (condition-case err
      (progn
        (when (or tether--in-change inhibit-modification-hooks)
          ;; Reached from inside a change hook (a full pipe made sending
          ;; wait for output): a buffer is between two states.
          (tether--refuse nil "a buffer was being changed when it arrived"))
        (tether--apply-plan (tether--plan-edit conn (plist-get params :edit)))
        (list :applied t))
    (tether--refused
     `(:applied :json-false :failureReason ,(nth 1 err)
                ,@(and (nth 2 err) (list :failedChange (nth 2 err)))))))

(defun tether--save-documents (conn params)
  "Answer `tether/saveDocuments' on CONN: save what PARAMS names.
A buffer whose file changed on disk since it was read is left
unsaved rather than asking."
  (let ((saved nil))
    (seq-doseq (uri (plist-get params :uris))
      (when-let ((buffer (tether--buffer-for-uri conn uri)))
        (with-current-buffer buffer
          (condition-case err
              (progn
                (when (and (buffer-modified-p)
                           (verify-visited-file-modtime buffer))
                  (let ((inhibit-message t) (save-silently t))
                    (basic-save-buffer)))
                (unless (buffer-modified-p) (push uri saved)))
            (error (message "tether: saving %s failed: %s"
                            buffer-file-name (error-message-string err)))))))
    (list :saved (vconcat (nreverse saved)))))


;;; The connection

(defun tether--handle-request (conn method params)
  "Answer the server's request METHOD with PARAMS on CONN."
  (pcase method
    ('workspace/applyEdit (tether--apply-workspace-edit conn params))
    ('tether/saveDocuments (tether--save-documents conn params))
    ('tether/editorContext (tether--editor-context conn))
    ('tether/languageRequest (tether--language-request conn params))
    ('tether/review (tether--review-request conn params))
    ((or 'client/registerCapability 'client/unregisterCapability) nil)
    ('window/showMessageRequest
     (message "tether: %s" (plist-get params :message))
     nil)
    ('workspace/configuration
     (make-vector (length (plist-get params :items)) nil))
    (_ (jsonrpc-error
        :code -32601
        :message (format "tether.el does not handle %s" method)))))

(defun tether--file-as-read-p (file params)
  "Whether FILE still has the size and time `tether/diskChange' PARAMS name."
  (let ((attrs (file-attributes file))
        (mtime (plist-get params :mtime)))
    (and attrs (vectorp mtime)
         (eql (file-attribute-size attrs) (plist-get params :size))
         (time-equal-p (file-attribute-modification-time attrs)
                       (cons (+ (* (aref mtime 0) 1000000000) (aref mtime 1))
                             1000000000)))))

(defun tether--disk-change (conn params)
  "Handle `tether/diskChange' on CONN: another program changed a file
whose buffer has unsaved changes.  When tether merged the change into
the buffer, the buffer holds everything the file does: while the file
is as tether read it, Emacs is told its new time, so that saving does
not ask whether to overwrite a file changed since it was visited.  When
it could not, the user is told, with the diff in *tether disk change*."
  (when-let ((buffer (tether--buffer-for-uri conn (plist-get params :uri))))
    (with-current-buffer buffer
      (if (eq (plist-get params :merged) t)
          (when (tether--file-as-read-p buffer-file-name params)
            (set-visited-file-modtime))
        (with-current-buffer (get-buffer-create "*tether disk change*")
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert (or (plist-get params :diff) ""))
            (diff-mode)))
        (message (concat "tether: %s changed on disk where it has unsaved changes"
                         " (%s); nothing was merged: see *tether disk change*")
                 (file-name-nondirectory buffer-file-name)
                 (plist-get params :overlaps))))))

(defun tether--disk-reload (conn params)
  "Handle `tether/diskReload' on CONN: another program changed the file
of a buffer without unsaved changes.  The buffer is reverted now, as
`auto-revert-mode' would, so that it shows the file's text; a buffer
modified meanwhile is left to Emacs's usual question."
  (when-let ((buffer (tether--buffer-for-uri conn (plist-get params :uri))))
    (with-current-buffer buffer
      (unless (buffer-modified-p)
        (revert-buffer :ignore-auto :noconfirm :preserve-modes)))))

(defun tether--log (conn format &rest args)
  "Add a line from FORMAT and ARGS to *tether log*, for CONN's root."
  (with-current-buffer (get-buffer-create "*tether log*")
    (let ((inhibit-read-only t))
      (goto-char (point-max))
      (insert (format "%s %s: %s\n" (format-time-string "%T")
                      (abbreviate-file-name (tether--root conn))
                      (apply #'format format args))))))

(defun tether--handle-notification (conn method params)
  "Handle the server's notification METHOD with PARAMS on CONN."
  (pcase method
    ('tether/diskChange (tether--disk-change conn params))
    ('tether/diskReload (tether--disk-reload conn params))
    ('window/showMessage (message "tether: %s" (plist-get params :message)))
    ('window/logMessage (tether--log conn "%s" (plist-get params :message)))
    ('$/cancelRequest (tether--review-withdraw conn params))
    (_ nil)))

(defun tether--initialize-params (root)
  "The `initialize' params for a server serving ROOT."
  (let ((uri (tether--path-to-uri (directory-file-name root))))
    (list
     :processId (emacs-pid)
     :clientInfo (list :name "tether.el" :version "0.1.0")
     :rootUri uri
     :rootPath (directory-file-name (file-truename root))
     :workspaceFolders
     (vector (list :uri uri
                   :name (file-name-nondirectory (directory-file-name root))))
     :initializationOptions
     (let ((options (copy-sequence tether-initialization-options))
           (review (tether--review-option)))
       (cond (review (plist-put options :review review))
             (options options)
             (t (make-hash-table))))
     :capabilities
     (list :general (list :positionEncodings ["utf-8" "utf-16"])
           :workspace (list :applyEdit t
                            :workspaceEdit
                            (list :documentChanges t
                                  :failureHandling "transactional")
                            :workspaceFolders t)
           :textDocument (list :synchronization
                               (list :dynamicRegistration :json-false
                                     :didSave t))
           :experimental (list :tether
                               (list :saveDocuments t
                                     :diagnostics t
                                     :editorContext t
                                     :languageRequests t
                                     :review t
                                     :diskChanges t
                                     :diskReloads t
                                     :protocolVersion
                                     tether-protocol-version))))))

(defun tether--executable ()
  "The tether binary to run, or nil when `tether-executable' names none."
  (if (file-name-absolute-p tether-executable)
      (and (file-executable-p tether-executable) tether-executable)
    (executable-find tether-executable)))

(defun tether--make-connection (root)
  "Start `tether lsp' in ROOT; return the connection, or nil.
When it cannot start, ROOT waits for `tether-restart'."
  (let ((name (format "tether %s"
                      (abbreviate-file-name (directory-file-name root))))
        (default-directory root)
        (executable (tether--executable)))
    (condition-case err
        (progn
          (unless executable
            (signal 'file-missing (list "no such program" tether-executable)))
          (make-instance
           'tether--connection
           :name name
           :root root
           :events-buffer-scrollback-size tether-events-buffer-size
           :process (lambda ()
                      (make-process
                       :name name
                       :command (append (list executable "lsp")
					tether-lsp-arguments)
                       :connection-type 'pipe
                       :coding 'utf-8-emacs-unix
                       :noquery t
                       :stderr (get-buffer-create (format "*%s stderr*" name))))
           :request-dispatcher #'tether--handle-request
           :notification-dispatcher #'tether--handle-notification
           :on-shutdown #'tether--on-shutdown))
      (error
       ;; Not tried again on every visit: the next try is `tether-restart'.
       (add-to-list 'tether--exited root)
       (message "tether: cannot start %s lsp: %s; M-x tether-restart retries"
                tether-executable (error-message-string err))
       nil))))

(defun tether--start (root)
  "Start `tether lsp' for ROOT; once ready, open the root's buffers."
  (when-let ((conn (tether--make-connection root)))
    (puthash root conn tether--connections)
    (jsonrpc-async-request
     conn :initialize (tether--initialize-params root)
     :success-fn (lambda (result) (tether--initialized conn result))
     :error-fn (lambda (error)
                 (message "tether: tether lsp for %s refused to start: %s"
                          (abbreviate-file-name root)
                          (plist-get error :message))
                 (tether--shutdown conn))
     :timeout 30
     :timeout-fn (lambda ()
                   (message "tether: tether lsp for %s did not answer"
                            (abbreviate-file-name root))
                   (tether--shutdown conn)))
    conn))

(defun tether--incompatible (result)
  "Why the server that answered `initialize' with RESULT cannot be used, or nil.
Compares its `experimental.tether' protocol versions with this package's."
  (let* ((ours (plist-get (plist-get (plist-get result :capabilities)
                                     :experimental)
                          :tether))
         (protocol (plist-get ours :protocolVersion))
         (minimum (or (plist-get ours :minProtocolVersion) 1))
         (info (plist-get result :serverInfo))
         (server (format "%s %s" (or (plist-get info :name) "the server")
                         (or (plist-get info :version) "(no version)"))))
    (cond
     ((not (integerp protocol))
      (format "%s announces no tether protocol: it is not tether, or a tether older than 0.1.0; install tether %s (cargo install --locked tether-bridge)"
              server tether-version))
     ((< protocol tether-min-server-protocol)
      (format "%s speaks tether protocol %d; this package (%s) needs %d or newer: install tether %s (cargo install --locked tether-bridge)"
              server protocol tether-version tether-min-server-protocol
              tether-version))
     ((> minimum tether-protocol-version)
      (format "%s serves tether protocol %d and newer; this package (%s) speaks %d: update tether.el to %s's version"
              server minimum tether-version tether-protocol-version
              (plist-get info :version))))))

(defun tether--initialized (conn result)
  "Take RESULT of `initialize', then open the root's buffers on CONN.
A server of an incompatible protocol is stopped, with a message saying why."
  (let* ((capabilities (plist-get result :capabilities))
         (ours (plist-get (plist-get capabilities :experimental) :tether))
         (why (tether--incompatible result)))
    (setf (tether--encoding conn)
          (pcase (plist-get capabilities :positionEncoding)
            ("utf-8" 'utf-8) ("utf-32" 'utf-32) (_ 'utf-16)))
    (setf (tether--protocol conn) (or (plist-get ours :protocolVersion) 0))
    (if why
        (progn
          (message "tether: %s (%s)" why (tether--executable))
          (add-to-list 'tether--exited (tether--root conn))
          (tether--shutdown conn))
      (tether--ready conn))))

(defun tether--ready (conn)
  "Say `initialized' to CONN, then open the root's buffers on it."
  (jsonrpc-notify conn :initialized (make-hash-table))
  (setf (tether--state conn) 'ready)
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (and buffer-file-name (not tether--conn)
                 (not (file-remote-p buffer-file-name))
                 (equal (tether--project-root buffer-file-name)
                        (tether--root conn)))
        (tether--open conn))))
  (tether--send-all-diagnostics conn))

(defun tether--on-shutdown (conn)
  "Cut CONN's buffers off once its process is gone.
Says so, unless we asked it to exit."
  (setf (tether--state conn) 'exited)
  (when (eq (gethash (tether--root conn) tether--connections) conn)
    (remhash (tether--root conn) tether--connections))
  (dolist (buffer (hash-table-values (tether--docs conn)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer (tether--forget))))
  (unless (tether--stopping conn)
    (add-to-list 'tether--exited (tether--root conn))
    (let ((proc (jsonrpc--process conn)))
      (message "tether: tether lsp for %s exited (%s %s); \
M-x tether-restart starts it again"
               (abbreviate-file-name (tether--root conn))
               (process-status proc) (process-exit-status proc)))))

(defun tether--shutdown (conn)
  "Ask CONN's server to exit, wait a little for it, then end it."
  (unless (tether--stopping conn)
    (setf (tether--stopping conn) t)
    (dolist (buffer (hash-table-values (tether--docs conn)))
      (when (buffer-live-p buffer)
        (with-current-buffer buffer (tether--forget))))
    (when (jsonrpc-running-p conn)
      ;; Sent without params, as LSP has it (`jsonrpc-request' would send
      ;; `"params": null', which tether takes too, but a tether older than
      ;; this package refused).  Its answer, under an id jsonrpc.el does not
      ;; track, is dropped; the first output (that answer) or a moment is let
      ;; pass before `exit'.
      (ignore-errors
        (jsonrpc-connection-send conn :id "shutdown" :method :shutdown)
        (accept-process-output (jsonrpc--process conn) 0.5)
        (jsonrpc-connection-send conn :method :exit))
      (let ((deadline (+ (float-time) 2)))
        (while (and (jsonrpc-running-p conn) (< (float-time) deadline))
          (accept-process-output (jsonrpc--process conn) 0.05))))
    (ignore-errors (jsonrpc-shutdown conn))
    (tether--on-shutdown conn)))

(defun tether--shutdown-all ()
  "End every server (when Emacs exits, or the mode is turned off)."
  (dolist (conn (hash-table-values tether--connections))
    (tether--shutdown conn)))


;;; The mode

;;;###autoload
(define-minor-mode tether-mode
  "Keep the file buffers of each project in step with `tether lsp'.
One server runs per project.  An assistant attached to it through
`tether mcp' reads your unsaved text, and its edits land in your
buffers, one undo step each."
  :global t
  :group 'tether
  :lighter " tether"
  (let ((hooks '((find-file-hook . tether--maybe-open)
                 (kill-buffer-hook . tether--close)
                 (after-save-hook . tether--after-save)
                 (after-revert-hook . tether--after-revert)
                 (after-set-visited-file-name-hook
                  . tether--visited-file-changed)
                 (kill-emacs-hook . tether--shutdown-all))))
    (cond
     (tether-mode
      ;; Before any buffer opens: it notes what eglot and lsp-mode send.
      (require 'tether-knowledge)
      (require 'tether-review)
      (pcase-dolist (`(,hook . ,fn) hooks) (add-hook hook fn))
      (setq tether--exited nil)
      (dolist (buffer (buffer-list))
        (tether--maybe-open buffer)))
     (t
      (pcase-dolist (`(,hook . ,fn) hooks) (remove-hook hook fn))
      (tether--shutdown-all)))))


;;; Commands

(defun tether--buffer-root ()
  "The project root of the current buffer, or nil."
  (or (and tether--conn (tether--root tether--conn))
      (when-let ((project (project-current)))
        (file-name-as-directory (expand-file-name (project-root project))))))

(defun tether--current-connection ()
  "Return the current project's ready connection, or signal why not."
  (let* ((root (or (tether--buffer-root)
                   (user-error "tether: not in a project")))
         (conn (gethash root tether--connections)))
    (unless conn
      (cond
       ((member root tether--exited)
        (user-error "tether: tether lsp for %s exited; M-x tether-restart"
                    (abbreviate-file-name root)))
       ((not tether-mode) (user-error "tether: `tether-mode' is off"))
       (t (setq conn (or (tether--start root)
                         (user-error "tether: tether lsp did not start"))))))
    (let ((deadline (+ (float-time) 10)))
      (while (and (eq (tether--state conn) 'starting)
                  (< (float-time) deadline))
        (accept-process-output nil 0.05)))
    (unless (eq (tether--state conn) 'ready)
      (user-error "tether: tether lsp for %s is not running"
                  (abbreviate-file-name root)))
    conn))

(defun tether--tools (conn)
  "Return the tools of CONN's server: plists with :name, :description."
  (append (plist-get (jsonrpc-request
                      conn :workspace/executeCommand
                      (list :command "tether.listTools" :arguments []))
                     :tools)
          nil))

(defun tether--call-async (conn tool arguments done)
  "Run TOOL with ARGUMENTS (a hash table) on CONN, without waiting.
DONE gets the result, or one made of the error.  Edits go on
meanwhile, and reach tether as they are made."
  (jsonrpc-async-request
   conn :workspace/executeCommand
   (list :command "tether.callTool"
         :arguments
         (vector `(:tool ,tool :arguments ,arguments
                         ,@(and (>= (tether--protocol conn) 2)
                                '(:interactive t)))))
   :success-fn done
   :error-fn (lambda (error)
               (let ((text (plist-get error :message)))
                 (funcall done (list :isError t
                                     :content (vector (list :type "text"
                                                            :text text))))))
   :timeout nil))

(defun tether--result-text (result)
  "The text blocks of a tool RESULT, joined."
  (mapconcat (lambda (block) (or (plist-get block :text) ""))
             (seq-filter (lambda (block) (equal (plist-get block :type) "text"))
                         (plist-get result :content))
             ""))

(defun tether--read-call ()
  "Read a tool and its JSON arguments for `tether-call'."
  (let* ((tools (tether--tools (tether--current-connection)))
         (names (mapcar (lambda (s) (plist-get s :name)) tools))
         (spec (lambda (name)
                 (seq-find (lambda (s) (equal (plist-get s :name) name))
                           tools)))
         (annotate (lambda (name)
                     (let ((doc (or (plist-get (funcall spec name) :description)
                                    "")))
                       (concat "  " (car (split-string doc "\n"))))))
         (tool (completing-read
                "tether tool: "
                (lambda (string pred action)
                  (if (eq action 'metadata)
                      `(metadata (annotation-function . ,annotate))
                    (complete-with-action action names string pred)))
                nil t))
         (schema (plist-get (funcall spec tool) :inputSchema))
         (required (append (plist-get schema :required) nil)))
    (list tool
          (read-string (format "%s arguments (JSON%s): " tool
                               (if required
                                   (format "; needs %s"
                                           (string-join required ", "))
                                 ""))
                       "{}"))))

;;;###autoload
(defun tether-call (tool arguments)
  "Run tether's TOOL with ARGUMENTS (JSON text); show the result.
Interactively, TOOL is chosen among the server's tools, with
completion, and ARGUMENTS are read as JSON."
  (interactive (tether--read-call))
  (let ((conn (tether--current-connection))
        (args (json-parse-string arguments :object-type 'hash-table
                                 :null-object nil :false-object :json-false)))
    (tether--call-async
     conn tool args
     (lambda (result)
       (with-current-buffer (get-buffer-create (format "*tether %s*" tool))
         (let ((inhibit-read-only t))
           (erase-buffer)
           (insert (tether--result-text result))
           (goto-char (point-min))
           (special-mode)
           (setq header-line-format
                 (format "tether %s %s%s" tool arguments
                         (if (eq (plist-get result :isError) t)
                             "  [failed]" ""))))
         (display-buffer (current-buffer)))))
    (message "tether: %s running..." tool)))

;;;###autoload
(defun tether-grep (pattern &optional glob)
  "Search the project for PATTERN through tether, unsaved text included.
PATTERN is a regex in Rust's syntax (as ripgrep).  The matches show
in a `grep-mode' buffer, so \\[next-error] visits them.  With a
prefix argument, GLOB narrows the files searched (\"*.rs\")."
  (interactive
   (list (read-string "tether grep (regex): " nil nil
                      (thing-at-point 'symbol t))
         (and current-prefix-arg (read-string "in files matching (glob): "))))
  (require 'grep)
  (let* ((conn (tether--current-connection))
         (root (tether--root conn))
         (args (make-hash-table :test #'equal)))
    (puthash "pattern" pattern args)
    (puthash "output_mode" "content" args)
    (when (and glob (not (string-empty-p glob)))
      (puthash "glob" glob args))
    (tether--call-async
     conn "grep" args
     (lambda (result)
       (with-current-buffer (get-buffer-create "*tether grep*")
         (let ((inhibit-read-only t))
           (erase-buffer)
           (setq default-directory root)
           (insert (format "-*- mode: grep; default-directory: %S -*-\n"
                           (abbreviate-file-name root))
                   (format "tether grep %s\n\n" pattern)
                   (tether--result-text result))
           (unless (bolp) (insert "\n"))
           (grep-mode)
           (setq default-directory root)
           (goto-char (point-min)))
         (setq next-error-last-buffer (current-buffer))
         (display-buffer (current-buffer)))))
    (message "tether: searching for %s..." pattern)))

(defun tether--status-lines ()
  "Return lines saying what each server this Emacs started is doing."
  (let ((lines nil))
    (maphash
     (lambda (root conn)
       (let ((count (hash-table-count (tether--docs conn))))
         (push (format "  %s  tether lsp pid %s: %s, positions in %s, \
%d buffer%s open"
                       (abbreviate-file-name root)
                       (process-id (jsonrpc--process conn))
                       (tether--state conn) (tether--encoding conn)
                       count (if (= count 1) "" "s"))
               lines)))
     tether--connections)
    (dolist (root tether--exited)
      (push (format "  %s  exited: M-x tether-restart starts it again"
                    (abbreviate-file-name root))
            lines))
    (nreverse lines)))

;;;###autoload
(defun tether-status ()
  "Show this Emacs's tether servers, and the output of `tether status'."
  (interactive)
  (let ((lines (tether--status-lines)))
    (with-current-buffer (get-buffer-create "*tether status*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "tether-mode is %s in this Emacs.\n"
                        (if tether-mode "on" "off"))
                (if lines
                    (concat "Servers started by this Emacs:\n"
                            (string-join lines "\n") "\n")
                  "No server started by this Emacs.\n")
                (format "\n$ %s status\n" tether-executable))
        (condition-case err
            (call-process tether-executable nil t nil "status")
          (error (insert (format "could not run %s: %s\n" tether-executable
                                 (error-message-string err)))))
        (goto-char (point-min))
        (special-mode))
      (display-buffer (current-buffer)))))

;;;###autoload
(defun tether-restart ()
  "Start the current project's `tether lsp' again.
The project's buffers are opened on the new server."
  (interactive)
  (let* ((root (or (tether--buffer-root)
                   (user-error "tether: not in a project")))
         (old (gethash root tether--connections)))
    (when old (tether--shutdown old))
    (setq tether--exited (delete root tether--exited))
    (if tether-mode
        (tether--start root)
      (tether-mode 1))
    (message "tether: starting tether lsp for %s"
             (abbreviate-file-name root))))

(provide 'tether)
;;; tether.el ends here
