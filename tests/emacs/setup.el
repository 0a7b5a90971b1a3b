;;; setup.el --- a plain Emacs with eglot running tether lsp, for the end-to-end tests  -*- lexical-binding: t -*-

;; Loaded with `emacs -nw -Q -l setup.el' inside tmux, so idle timers and prompts behave as they
;; do for a user. The tests drive it two ways: keystrokes through tmux (typing, answering a
;; prompt, `C-c t' to run a tool call as a user's command would), and `emacsclient --eval' for
;; setup and for reading the state back. Environment:
;;   TETHER_BIN           the tether binary
;;   TETHER_TEST_OUT      a folder for the files this writes (results, state)
;;   TETHER_TEST_CONFIRM  "1" keeps eglot's default of confirming server edits
;;   TETHER_TEST_CLIENT   "eglot" (the default) or "lsp-mode", the LSP client that runs tether

(require 'package)
(package-initialize)
(dolist (dir (directory-files "/usr/share/emacs/site-lisp/elpa" t "^[a-z]"))
  (add-to-list 'load-path dir))
(defvar tether-test-client (if (equal (getenv "TETHER_TEST_CLIENT") "lsp-mode") 'lsp-mode 'eglot))
(require 'eglot)
(require 'json)
(require 'server)
(when (eq tether-test-client 'lsp-mode)
  (require 'lsp-mode)
  ;; tether as an add-on server for every buffer, beside whatever language server the mode has.
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection (list (getenv "TETHER_BIN") "lsp"))
                    :activation-fn (lambda (&rest _) t)
                    :server-id 'tether
                    :add-on? t)))

(defvar tether-test-out (file-name-as-directory (getenv "TETHER_TEST_OUT")))

(setq make-backup-files nil
      auto-save-default nil
      create-lockfiles nil
      inhibit-startup-screen t
      eglot-autoreconnect nil)
(unless (equal (getenv "TETHER_TEST_CONFIRM") "1")
  (setq eglot-confirm-server-initiated-edits nil))

(setq lsp-session-file (concat tether-test-out "lsp-session")
      lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-headerline-breadcrumb-enable nil
      lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil
      lsp-enable-snippet nil)

(setq server-socket-dir tether-test-out
      server-name "emacs")
(server-start)

;;; What the tests count: every `workspace/applyEdit' eglot handles, every prompt it shows.

(defvar tether-test-applied 0 "How many workspace edits eglot was asked to apply.")
(defvar tether-test-prompts nil "The prompts shown by `y-or-n-p', oldest first.")

(dolist (apply '(eglot--apply-workspace-edit lsp--apply-workspace-edit))
  (advice-add apply :before (lambda (&rest _) (setq tether-test-applied (1+ tether-test-applied)))))
(advice-add 'y-or-n-p :before
            (lambda (prompt &rest _)
              (setq tether-test-prompts (append tether-test-prompts (list prompt)))))

;;; Setup, called through emacsclient.

(defvar tether-test-buffer nil "The buffer the test types into.")
(defvar tether-test-server nil "eglot's connection to tether lsp.")

(defun tether-test-open (file)
  "Visits FILE in the selected window in `text-mode' and starts tether lsp for it."
  (setq tether-test-buffer (find-file file))
  (with-current-buffer tether-test-buffer
    (text-mode)
    (pcase tether-test-client
      ('eglot
       (eglot '(text-mode) (project-current) 'eglot-lsp-server
              (list (getenv "TETHER_BIN") "lsp") "plaintext")
       (tether-test--wait-for #'eglot-current-server)
       (setq tether-test-server (eglot-current-server)))
      ('lsp-mode
       (lsp)
       (tether-test--wait-for
        (lambda () (seq-find (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                             (lsp-workspaces))))))
    t))

(defun tether-test--wait-for (ready)
  (let ((deadline (+ (float-time) 20)))
    (while (and (not (funcall ready)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall ready) (error "tether lsp did not start"))))

(defun tether-test-goto (line column)
  "Puts point at 1-based LINE and 0-based COLUMN of the test's buffer, where typing goes."
  (with-current-buffer tether-test-buffer
    (goto-char (point-min))
    (forward-line (1- line))
    (move-to-column column)
    (set-window-point (get-buffer-window tether-test-buffer) (point)))
  t)

;;; Tool calls.

(defun tether-test--write (name object)
  "Writes OBJECT as JSON to NAME in the output folder, whole or not at all (the tests poll)."
  (let ((file (concat tether-test-out name)))
    (with-temp-file (concat file ".part")
      (insert (json-encode object)))
    (rename-file (concat file ".part") file t)))

(defun tether-test--call (id tool arguments)
  "Runs TOOL with ARGUMENTS (a JSON object as text) through `tether.callTool', the way a command
of the user's would (the request waits, and eglot sends no didChange meanwhile), and writes the
answer, or the JSON-RPC error, to result-ID.json."
  (let* ((params (list :command "tether.callTool"
                       :arguments (vector (list :tool tool
                                                :arguments (json-parse-string
                                                            arguments :object-type 'plist)))))
         (answer
          (condition-case err
              (list :result
                    (pcase tether-test-client
                      ('eglot (jsonrpc-request tether-test-server :workspace/executeCommand params))
                      ('lsp-mode (with-current-buffer tether-test-buffer
                                   (lsp-request "workspace/executeCommand" params)))))
            (jsonrpc-error
             (list :error (or (cdr (assq 'jsonrpc-error-message (cdr err))) (format "%S" err))))
            (error (list :error (error-message-string err))))))
    (tether-test--write (format "result-%s.json" id) answer)))

(defun tether-test-call-from-request ()
  "A user's command: runs the tool call described in request.json (id, tool, arguments)."
  (interactive)
  (let* ((request (json-read-file (concat tether-test-out "request.json")))
         (id (alist-get 'id request))
         (tool (alist-get 'tool request))
         (arguments (json-encode (alist-get 'arguments request))))
    (tether-test--call id tool arguments)))

(global-set-key (kbd "C-c t") #'tether-test-call-from-request)

;;; State, read through emacsclient.

(defun tether-test-state (file)
  "Writes state.json: FILE's buffer text and modified flag, the edits and prompts counted."
  (with-current-buffer (find-buffer-visiting file)
    (tether-test--write
     "state.json"
     (list :text (buffer-substring-no-properties (point-min) (point-max))
           :modified (if (buffer-modified-p) t :json-false)
           :applied tether-test-applied
           :prompts (vconcat tether-test-prompts)
           :minibuffer (if (active-minibuffer-window) t :json-false))))
  t)

;;; setup.el ends here
