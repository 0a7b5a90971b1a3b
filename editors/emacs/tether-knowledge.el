;;; tether-knowledge.el --- What Emacs knows, for tether's tools  -*- lexical-binding: t -*-

;; Copyright (C) 2026 tether contributors

;; This file is not part of GNU Emacs.

;;; Commentary:

;; tether analyses no code: Emacs's language servers do.  This file
;; hands tether what they know, over three methods of tether's protocol
;; (editors/protocol.md in tether's repository):
;;
;; - `tether/publishDiagnostics': the problems the servers that eglot
;;   or lsp-mode runs report for a buffer (what flymake or flycheck
;;   shows of them), whole, each time they change.  A report is stamped
;;   with tether's version of the text it is KNOWN to be for, never with
;;   the version the buffer has when it arrives (a server may send what
;;   it found in the text before a change after the change reached it).
;;   eglot and lsp-mode count a buffer's versions their own way, so each
;;   version sent to a server, and each sent to tether, is noted with
;;   the buffer's `buffer-chars-modified-tick' at that moment: a report
;;   the server stamps with its version V is for the text at V's tick,
;;   which is tether's version at that tick.  A report without a version
;;   (pylsp sends none), or for a text tether never had as one version,
;;   is stamped null, and tether never takes it for a change's result.
;; - `tether/editorContext': the windows showing the project's buffers,
;;   point, the region, and what each window shows.
;; - `tether/languageRequest': definition, references, hover, symbols
;;   and rename, asked of the language server eglot or lsp-mode already
;;   runs for the buffer (no second server), positions converted to its
;;   unit.  A file no buffer visits is visited first.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'tether)

;; eglot and lsp-mode are used when they are loaded, never loaded here.
(defvar eglot--managed-mode)
(defvar eglot--versioned-identifier)
(defvar eglot-current-column-function)
(defvar lsp-mode)
(defvar lsp--cur-version)
(defvar lsp--buffer-workspaces)
(declare-function eglot-current-server "eglot")
(declare-function eglot--capabilities "eglot")
(declare-function eglot--server-info "eglot")
(declare-function eglot--TextDocumentIdentifier "eglot")
(declare-function eglot--signal-textDocument/didChange "eglot")
(declare-function eglot--managed-buffers "eglot")
(declare-function lsp-workspaces "lsp-mode")
(declare-function lsp-request "lsp-mode")
(declare-function lsp--text-document-identifier "lsp-mode")
(declare-function lsp--workspace-client "lsp-mode")
(declare-function lsp--client-server-id "lsp-mode")
(declare-function lsp--workspace-server-capabilities "lsp-mode")
(declare-function lsp--workspace-work-done-tokens "lsp-mode")

(defvar tether-language-request-timeout 8.5
  "Seconds a language server may take to answer for tether.
Under the 10 s tether waits, so that a slow server is reported as
such rather than lost in tether's timeout.")

(defvar tether-language-attach-time 0.5
  "Seconds to wait for a language server to take a file just visited.
eglot takes a new buffer of a project it already serves at once, or
while Emacs reads process output; one that has to start is not
waited for.")


;;; Which text each server's versions name

(defvar-local tether--server-ticks nil
  "The versions each LSP client of the buffer sent to its servers.
An alist from `eglot' or `lsp-mode' to ((VERSION . TICK) ...),
newest first, TICK the `buffer-chars-modified-tick' of its text.")

(defvar-local tether--reports nil
  "The buffer's last report from each language server.
An alist from the server (an eglot server, an lsp-mode workspace) to
a plist (:client C :version V :encoding E :diagnostics D): V is
tether's version of the text reported on, or nil when not known; E
the unit of D's positions.")

(defvar-local tether--diagnostics-sent nil
  "The connection and params this buffer's diagnostics were last sent with.")

(dolist (var '(tether--server-ticks tether--reports tether--diagnostics-sent))
  (put var 'permanent-local t))

(defun tether--server-sent (client version &optional reset)
  "Note that CLIENT now has the buffer's text as VERSION.
With RESET (a `didOpen'), earlier versions are forgotten.  A VERSION
already noted keeps its first text: a client that sends a change
without counting it (lsp-mode during a revert) must not make an old
version name the new text."
  (let* ((cell (or (assq client tether--server-ticks)
                   (car (push (list client) tether--server-ticks))))
         (seen (if reset nil (cdr cell))))
    (unless (and (integerp version) (eql version (caar seen)))
      (when (integerp version)
        (push (cons version (buffer-chars-modified-tick)) seen)
        (when (> (length seen) tether--ticks-kept)
          (setcdr (nthcdr (1- tether--ticks-kept) seen) nil)))
      (setcdr cell seen))))

(defun tether--version-of (client version)
  "tether's version of the text CLIENT sent as VERSION, or nil."
  (when-let* (((integerp version))
              (tick (cdr (assoc version (cdr (assq client tether--server-ticks))))))
    (cdr (assoc tick tether--ticks))))

(defun tether--eglot-changed (&rest _)
  "Note eglot's version after a change (`eglot--after-change')."
  (tether--server-sent 'eglot eglot--versioned-identifier))

(defun tether--eglot-opened (&rest _)
  "Note eglot's version after `didOpen', which restarts its count."
  (tether--server-sent 'eglot eglot--versioned-identifier t))

(defun tether--lsp-changed (&rest _)
  "Note lsp-mode's version after a change (`lsp-on-change')."
  (tether--server-sent 'lsp-mode lsp--cur-version))

(defun tether--lsp-opened (&rest _)
  "Note lsp-mode's version after `didOpen'."
  (tether--server-sent 'lsp-mode lsp--cur-version t))


;;; Diagnostics

(defun tether--get (object key)
  "KEY of OBJECT, a JSON object as a plist (eglot) or a hash table (lsp-mode)."
  (if (hash-table-p object)
      (gethash (substring (symbol-name key) 1) object)
    (plist-get object key)))

(defun tether--eglot-encoding (server)
  "The unit of the positions eglot exchanges with SERVER."
  (let ((negotiated (ignore-errors
                      (plist-get (eglot--capabilities server) :positionEncoding))))
    (cond ((member negotiated '("utf-8" "utf-16" "utf-32")) negotiated)
          ((and (boundp 'eglot-current-column-function)
                (eq eglot-current-column-function 'eglot-current-column))
           "utf-32")
          (t "utf-16"))))

(defun tether--buffer-of-uri (uri)
  "The live buffer visiting the file of URI, or nil."
  (when-let ((file (and (stringp uri) (tether--uri-to-path uri))))
    (find-buffer-visiting file)))

(defun tether--report (server client params encoding)
  "Keep SERVER's report PARAMS (`publishDiagnostics') from CLIENT.
ENCODING is the unit of its positions."
  (when-let ((buffer (tether--buffer-of-uri (tether--get params :uri))))
    (with-current-buffer buffer
      (setf (alist-get server tether--reports nil nil #'eq)
            (list :client client
                  :version (tether--version-of client
                                               (tether--get params :version))
                  :encoding encoding
                  :diagnostics (append (tether--get params :diagnostics) nil)))
      (tether--send-diagnostics))))

(defun tether--eglot-notified (server method &rest params)
  "After eglot handled METHOD with PARAMS from SERVER: keep a report."
  (when (eq method 'textDocument/publishDiagnostics)
    (tether--report server 'eglot params (tether--eglot-encoding server))))

(defun tether--lsp-notified (workspace params)
  "After lsp-mode kept WORKSPACE's report PARAMS: keep it too."
  ;; lsp-mode counts columns in characters but does not say so to the
  ;; server, which then speaks UTF-16 as LSP's default.
  (tether--report workspace 'lsp-mode params "utf-16"))

(defun tether--forget-reports (client)
  "Drop the current buffer's reports from CLIENT, whose servers left it."
  (when (seq-find (lambda (r) (eq (plist-get (cdr r) :client) client))
                  tether--reports)
    (setq tether--reports
          (seq-remove (lambda (r) (eq (plist-get (cdr r) :client) client))
                      tether--reports))
    (tether--send-diagnostics)))

(defun tether--eglot-managed ()
  "`eglot-managed-mode-hook': forget eglot's past when it lets go."
  (unless eglot--managed-mode
    (setq tether--server-ticks (assq-delete-all 'eglot tether--server-ticks))
    (tether--forget-reports 'eglot)))

(defun tether--convert (position from to)
  "POSITION with its column in unit FROM, as a position in unit TO.
Measured on the buffer's text; a position that is not in it is kept."
  (let ((point (tether--point (list :line (tether--get position :line)
                                    :character (tether--get position :character))
                              (intern from))))
    (if point (tether--position point (intern to)) position)))

(defun tether--diagnostic-in (diagnostic from to)
  "DIAGNOSTIC, its positions in unit FROM, with them in unit TO."
  (if (equal from to)
      diagnostic
    (let ((range (tether--get diagnostic :range)))
      (list :range (list :start (tether--convert (tether--get range :start) from to)
                         :end (tether--convert (tether--get range :end) from to))
            :severity (tether--get diagnostic :severity)
            :code (tether--get diagnostic :code)
            :source (tether--get diagnostic :source)
            :message (tether--get diagnostic :message)))))

(defun tether--diagnostics-params ()
  "The current buffer's `tether/publishDiagnostics' params.
All its servers' reports, stamped with the oldest of their versions,
or null when any is unknown: one server that has not caught up holds
the buffer's report back, so that tether never takes stale problems
for the result of a change."
  (let* ((reports (mapcar #'cdr tether--reports))
         (encoding (or (plist-get (car reports) :encoding) "utf-16"))
         (versions (mapcar (lambda (r) (plist-get r :version)) reports))
         (version (and reports (not (memq nil versions)) (apply #'min versions))))
    (list :uri tether--uri
          :version version
          :positionEncoding encoding
          :diagnostics
          (vconcat
           (cl-loop for r in reports
                    append (mapcar (lambda (d)
                                     (tether--diagnostic-in
                                      d (plist-get r :encoding) encoding))
                                   (plist-get r :diagnostics))))
          ;; Pushed reports may come in parts for one version.
          :complete :json-false)))

(defun tether--send-diagnostics ()
  "Send the current buffer's diagnostics to its tether, unless it has them.
Nothing is said of a buffer no server has reported on (no news is
not \"no problems\"); once one has, every change is sent."
  (when-let ((conn tether--conn))
    (when (and (jsonrpc-running-p conn) (>= (tether--protocol conn) 3)
               (or tether--reports
                   (eq (car tether--diagnostics-sent) conn)))
      (let ((params (tether--diagnostics-params)))
        (unless (and (eq (car tether--diagnostics-sent) conn)
                     (equal (cdr tether--diagnostics-sent) params))
          (setq tether--diagnostics-sent (cons conn params))
          (jsonrpc-notify conn :tether/publishDiagnostics params))))))

(defun tether--send-all-diagnostics (conn)
  "Send CONN the diagnostics of every buffer open on it that has some."
  (dolist (buffer (hash-table-values (tether--docs conn)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (setq tether--diagnostics-sent nil)
        (tether--send-diagnostics)))))

(defun tether--flush-to-servers ()
  "Send the language servers an edit from tether at once.
eglot waits for Emacs to be idle before it sends changes; the edit's
diagnostics would wait for that too."
  (when (and (bound-and-true-p eglot--managed-mode)
             (fboundp 'eglot--signal-textDocument/didChange))
    (eglot--signal-textDocument/didChange)))


;;; The view

(defun tether--editor (window active)
  "WINDOW, showing the current buffer, as an `editorContext' editor.
ACTIVE says whether it is the selected window."
  (let* ((point (window-point window))
         (region (and active (region-active-p)
                      (cons (region-beginning) (region-end))))
         (beg (if region (car region) point))
         (end (if region (cdr region) point)))
    (list :uri tether--uri
          :version tether--version
          :active (if active t :json-false)
          :selections
          (vector (list :range (list :start (tether--position beg)
                                     :end (tether--position end))
                        :text (tether--text beg end)))
          :visibleRanges
          (vector (list :start (tether--position (window-start window))
                        :end (tether--position (tether--shown-end window)))))))

(defun tether--shown-end (window)
  "Where the text WINDOW shows ends: the end of its last line shown.
`window-end' is the start of the line after it, or the end of the
buffer after its last line break."
  (let ((start (window-start window))
        (end (window-end window t)))
    (save-excursion
      (goto-char end)
      (if (and (> end start) (bolp)) (1- end) end))))

(defun tether--editor-context (conn)
  "Answer `tether/editorContext' on CONN: the windows showing its buffers."
  (let ((selected (selected-window))
        (editors nil))
    (dolist (window (window-list-1 nil 'nomini 'visible))
      (with-current-buffer (window-buffer window)
        (when (eq tether--conn conn)
          (push (tether--editor window (eq window selected)) editors))))
    (list :positionEncoding (symbol-name (tether--encoding conn))
          :editors (vconcat (nreverse editors)))))


;;; The language servers' answers

(defconst tether--language-methods
  '("textDocument/definition" "textDocument/references" "textDocument/hover"
    "textDocument/documentSymbol" "workspace/symbol" "textDocument/rename")
  "The methods `tether/languageRequest' may name.")

(defun tether--lsp-is-tether (workspace)
  "Whether lsp-mode's WORKSPACE is a tether server itself."
  (let ((capabilities (lsp--workspace-server-capabilities workspace)))
    (and capabilities
         (tether--get (tether--get capabilities :experimental) :tether)
         t)))

(defun tether--language-servers ()
  "The language servers of the current buffer, tether's aside.
A list of (CLIENT . SERVER), CLIENT `eglot' or `lsp-mode'."
  (append
   (when-let ((server (and (bound-and-true-p eglot--managed-mode)
                           (eglot-current-server))))
     (list (cons 'eglot server)))
   (when (and (bound-and-true-p lsp-mode) (fboundp 'lsp-workspaces))
     (mapcar (lambda (w) (cons 'lsp-mode w))
             (seq-remove #'tether--lsp-is-tether (lsp-workspaces))))))

(defun tether--server-name (client server)
  "A name for SERVER of CLIENT, as the answer's `servers' gives it."
  (pcase client
    ('eglot (or (plist-get (eglot--server-info server) :name)
                (jsonrpc-name server)))
    (_ (format "%s" (lsp--client-server-id (lsp--workspace-client server))))))

(defun tether--request-error (code format &rest args)
  "Signal a JSON-RPC error CODE with a message from FORMAT and ARGS."
  (signal 'jsonrpc-error
          (list (cons 'jsonrpc-error-code code)
                (cons 'jsonrpc-error-message (apply #'format format args)))))

(defun tether--params-for (params encoding identifier)
  "tether's request PARAMS as one server takes them.
The position, in tether's unit on the text tether has, is given in
ENCODING (the server's unit); IDENTIFIER names the document as that
server knows it."
  (let ((out (copy-sequence params)))
    (when identifier
      (setq out (plist-put out :textDocument identifier)))
    (when-let ((position (plist-get params :position)))
      (let ((point (tether--point position)))
        (unless point
          (tether--request-error -32602 "the position %S is not in %s"
                                 position (buffer-name)))
        (setq out (plist-put out :position
                             (tether--position point (intern encoding))))))
    out))

(defun tether--ask-one (client server method params)
  "Ask SERVER of CLIENT for METHOD with tether's PARAMS.
Return (ENCODING RESULT COMPLETE)."
  (pcase client
    ('eglot
     ;; eglot sends changes when Emacs is idle: the server must have
     ;; the text tether asks about, in every buffer it serves (a
     ;; rename's edits are computed on them all).
     (dolist (buffer (eglot--managed-buffers server))
       (when (buffer-live-p buffer)
         (with-current-buffer buffer
           (eglot--signal-textDocument/didChange))))
     (let ((encoding (tether--eglot-encoding server)))
       (list encoding
             (jsonrpc-request server (intern (concat ":" method))
                              (tether--params-for
                               params encoding
                               (and (plist-get params :textDocument)
                                    (eglot--TextDocumentIdentifier)))
                              :timeout tether-language-request-timeout)
             t)))
    ('lsp-mode
     (let ((lsp--buffer-workspaces (list server))
           (encoding "utf-16"))
       (list encoding
             (lsp-request method
                          (tether--params-for
                           params encoding
                           (and (plist-get params :textDocument)
                                (lsp--text-document-identifier))))
             ;; Work-done progress still open: the server is indexing.
             (zerop (hash-table-count
                     (lsp--workspace-work-done-tokens server))))))))

(defun tether--merge (method answers)
  "One result of METHOD from ANSWERS, ((ENCODING RESULT COMPLETE) ...).
Lists of places and symbols are joined; a hover or a rename is the
first server's that has one."
  (if (member method '("textDocument/hover" "textDocument/rename"))
      (seq-some #'cadr answers)
    (vconcat
     (cl-loop for (_ result) in answers
              append (cond ((null result) nil)
                           ;; One Location, not a list.
                           ((tether--get result :uri) (list result))
                           (t (append result nil)))))))

(defun tether--ask (conn method params servers)
  "Ask SERVERS, ((CLIENT . SERVER) ...), for METHOD with PARAMS.
The answer is `tether/languageRequest''s result.  Servers whose
positions are in another unit than the first's are left out (the
result has one unit): said in the log."
  (let ((answers nil) (names nil) (errors nil) (complete t))
    (pcase-dolist (`(,client . ,server) servers)
      (let ((name (tether--server-name client server)))
        (condition-case err
            (let ((answer (tether--ask-one client server method params)))
              (if (and answers (not (equal (car answer) (caar answers))))
                  (tether--log conn "%s answers %s in %s, another server in %s: left out"
                               name method (car answer) (caar answers))
                (push name names)
                (push answer answers)
                (setq complete (and complete (nth 2 answer)))))
          (jsonrpc-error
           (push (format "%s: %s" name
                         (or (alist-get 'jsonrpc-error-message (cdr err))
                             (error-message-string err)))
                 errors))
          (error (push (format "%s: %s" name (error-message-string err))
                       errors)))))
    (when (and servers (null answers))
      (tether--request-error -32803 "%s" (string-join (nreverse errors) "; ")))
    (setq answers (nreverse answers))
    (list :positionEncoding (if answers (caar answers)
                              (symbol-name (tether--encoding conn)))
          :servers (vconcat (nreverse names))
          :complete (if complete t :json-false)
          :result (and answers (tether--merge method answers)))))

(defun tether--visit (conn uri)
  "The buffer of URI's file on CONN, visited when no buffer has it.
A file visited here gets a moment for eglot or lsp-mode to take it."
  (or (tether--buffer-for-uri conn uri)
      (let ((file (tether--uri-to-path uri)))
        (unless (and file (file-regular-p file))
          (tether--request-error -32602 "no such file: %s" (or file uri)))
        (let ((buffer (or (find-buffer-visiting file)
                          (find-file-noselect file)))
              (deadline (+ (float-time) tether-language-attach-time)))
          (while (and (not (with-current-buffer buffer
                             (tether--language-servers)))
                      (< (float-time) deadline))
            (accept-process-output nil 0.05))
          buffer))))

(defun tether--workspace-servers (conn)
  "The language servers of every buffer open on CONN, each once."
  (let ((servers nil))
    (dolist (buffer (hash-table-values (tether--docs conn)))
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (dolist (entry (tether--language-servers))
            (unless (rassq (cdr entry) servers)
              (push entry servers))))))
    (nreverse servers)))

(defun tether--language-request (conn params)
  "Answer `tether/languageRequest' PARAMS on CONN."
  (let ((method (plist-get params :method))
        (request (plist-get params :params)))
    (unless (and (member method tether--language-methods) (consp request))
      (tether--request-error -32602 "unsupported method %S" method))
    (if (equal method "workspace/symbol")
        (tether--ask conn method request (tether--workspace-servers conn))
      (let ((uri (plist-get (plist-get request :textDocument) :uri)))
        (unless (stringp uri)
          (tether--request-error -32602 "params.textDocument.uri is missing"))
        (with-current-buffer (tether--visit conn uri)
          (tether--ask conn method request (tether--language-servers)))))))


;;; Hooked into eglot and lsp-mode, whichever is loaded

(add-hook 'tether-after-apply-functions #'tether--flush-to-servers)

(with-eval-after-load 'eglot
  (advice-add 'eglot--after-change :after #'tether--eglot-changed)
  (advice-add 'eglot--signal-textDocument/didOpen :after #'tether--eglot-opened)
  (advice-add 'eglot-handle-notification :after #'tether--eglot-notified)
  (add-hook 'eglot-managed-mode-hook #'tether--eglot-managed))

(with-eval-after-load 'lsp-mode
  (advice-add 'lsp-on-change :after #'tether--lsp-changed)
  (advice-add 'lsp--text-document-did-open :after #'tether--lsp-opened)
  (advice-add 'lsp--on-diagnostics :after #'tether--lsp-notified))

(provide 'tether-knowledge)
;;; tether-knowledge.el ends here
